/**
 * A scheduled message as stored until its time: the validated message exactly as the send path
 * holds it, whatever fields it has (attachments, headers and tags included), in V8's structured
 * serialisation (which keeps binary content, dates, maps and sets as they are, unlike JSON), then
 * gzip (text, HTML and base64 shrink to a third or less).
 *
 * An item holds at most 400 KB, and a message with attachments can be several megabytes, so a
 * body larger than `PART_BYTES` is cut into parts, each its own item in the schedule's partition
 * (see schedule-store.ts for why the table and not S3).
 */
import { deserialize, serialize } from 'node:v8';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { ValidMessage } from '../mail/valid-message';

export { PART_BYTES, splitBody } from '../store/item-parts';


export function encodeMessage(message: ValidMessage): Buffer {
  return gzipSync(serialize(message));
}

export function decodeMessage(bytes: Uint8Array): ValidMessage {
  return deserialize(gunzipSync(bytes)) as ValidMessage;
}

