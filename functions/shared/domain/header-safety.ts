/**
 * C0 and C1 controls, DEL, and the Unicode line/paragraph separators: anything that could end or
 * fold a header line. Nothing that goes into a header (addresses, display name, subject) may
 * contain one.
 */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
