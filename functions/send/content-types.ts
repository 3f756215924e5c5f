/**
 * The content type an attachment's file name suggests, when the message gives none: nodemailer's
 * table of extensions. It is 76 KiB and builds two Maps when imported, and most sends carry no
 * attachment, so it is loaded only for a request that needs it (`loadContentTypesFor`, before
 * validation) instead of on every cold start; validation then reads it synchronously.
 */
import { ownOf } from '../shared/http/body-rules';
import { loadedOnFirstUse } from '../shared/runtime/deferred';

const table = loadedOnFirstUse(async () => (await import('nodemailer/lib/mime-funcs')).detectMimeType);

/** Loads the table if the body (not yet validated) has an attachment without a ContentType string. */
export async function loadContentTypesFor(body: unknown): Promise<void> {
  if (table.loaded() === undefined && needsContentTypes(body)) await loadContentTypes();
}

export async function loadContentTypes(): Promise<void> {
  await table.load();
}

/** The type for a file name; the table must have been loaded for this request. */
export function contentTypeOf(fileName: string): string {
  const detectMimeType = table.loaded();
  if (detectMimeType === undefined) throw new Error('content types are not loaded: call loadContentTypesFor(body) before validating it');
  return detectMimeType(fileName);
}

// Errs on the side of loading: anything shaped otherwise is refused by validation before a type is looked up.
function needsContentTypes(body: unknown): boolean {
  const messages = ownOf(body, 'Messages');
  if (!Array.isArray(messages)) return false;
  return messages.some((message) => {
    const attachments = ownOf(message, 'Attachments');
    return Array.isArray(attachments) && attachments.some((attachment) => typeof ownOf(attachment, 'ContentType') !== 'string');
  });
}
