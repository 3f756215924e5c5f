/**
 * The content type an attachment's file name suggests, when the message gives none: nodemailer's
 * table of extensions. It is 76 KiB and builds two Maps when imported, and most sends carry no
 * attachment, so it is loaded only for a request that needs it (`loadContentTypesFor`, before
 * validation) instead of on every cold start; validation then reads it synchronously.
 */
let detectMimeType: ((fileName: string) => string) | undefined;

/** Loads the table if the body (not yet validated) has an attachment without a ContentType string. */
export async function loadContentTypesFor(body: unknown): Promise<void> {
  if (detectMimeType === undefined && needsContentTypes(body)) await loadContentTypes();
}

export async function loadContentTypes(): Promise<void> {
  detectMimeType ??= (await import('nodemailer/lib/mime-funcs')).detectMimeType;
}

/** The type for a file name; the table must have been loaded for this request. */
export function contentTypeOf(fileName: string): string {
  if (detectMimeType === undefined) throw new Error('content types are not loaded: call loadContentTypesFor(body) before validating it');
  return detectMimeType(fileName);
}

const field = (value: unknown, name: string): unknown => (typeof value === 'object' && value !== null && Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined);

// Errs on the side of loading: anything shaped otherwise is refused by validation before a type is looked up.
function needsContentTypes(body: unknown): boolean {
  const messages = field(body, 'Messages');
  if (!Array.isArray(messages)) return false;
  return messages.some((message) => {
    const attachments = field(message, 'Attachments');
    return Array.isArray(attachments) && attachments.some((attachment) => typeof field(attachment, 'ContentType') !== 'string');
  });
}
