/** JSON Pointer (RFC 6901) helpers, for the pointers that locate problems in a request body. */

/** One reference token: `~` and `/` escaped as `~0` and `~1`. */
export const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** The reference token back as the name it escapes. */
export const unescapePointer = (token: string): string => token.replace(/~1/g, '/').replace(/~0/g, '~');
