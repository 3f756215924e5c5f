/**
 * C0 and C1 controls, DEL, and the Unicode line/paragraph separators: anything that could end or
 * fold a header line. Nothing that goes into a header (addresses, display name, subject) may
 * contain one.
 */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** RFC 5322 line length limit, applied to the whole subject (written or rendered from a template). */
export const MAX_SUBJECT_LENGTH = 998;

/** Amazon SES takes at most 50 recipients a message (To, Cc and Bcc together). */
export const MAX_RECIPIENTS = 50;
