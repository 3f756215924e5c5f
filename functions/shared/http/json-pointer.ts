/** JSON Pointer (RFC 6901) helpers, for the pointers that locate problems in a request body. */

/** One reference token: `~` and `/` escaped as `~0` and `~1`. */
export const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');
