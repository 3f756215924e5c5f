/** A value larger than one DynamoDB item holds (400 KB), cut into parts of one item each (scheduled messages, templates). */

/** What one item carries of a body: well under 400 KB, leaving room for the key and attributes. */
export const PART_BYTES = 350 * 1024;

/** The body in parts of at most `size` bytes (one part, possibly empty, at least). */
export function splitBody(body: Uint8Array, size = PART_BYTES): Uint8Array[] {
  const parts: Uint8Array[] = [];
  for (let offset = 0; offset < body.length || parts.length === 0; offset += size) parts.push(body.subarray(offset, offset + size));
  return parts;
}
