/**
 * The HTML part of `Raw` MIME, for the local SES front's tracking (tracking.ts): the rare message
 * whose custom headers `Simple` content cannot carry is composed as MIME by the send path
 * (nodemailer), and SES tracks its HTML as it tracks `Simple` HTML.
 *
 * The message is handled as bytes (a latin1 string, one character per byte): each part's header
 * block is read, the first `text/html` part that is not an attachment is decoded from its
 * transfer encoding (base64, quoted-printable, or none), rewritten, and put back base64-encoded
 * (its `Content-Transfer-Encoding` header says so); every other byte stays as it was. A part in
 * a charset other than UTF-8 or US-ASCII is left alone (the send path writes UTF-8).
 */

type Rewrite = (html: string) => string;

interface Part {
  readonly headerStart: number;
  readonly bodyStart: number;
  readonly bodyEnd: number;
  readonly headers: readonly { readonly name: string; readonly value: string; readonly start: number; readonly end: number }[];
}

const header = (part: Part, name: string) => part.headers.find((field) => field.name === name)?.value ?? '';

/** The header fields of the block from `start` to its blank line, unfolded, with their spans. */
function readPart(mime: string, start: number, boundaries: readonly string[]): Part | undefined {
  const blank = mime.indexOf('\r\n\r\n', start);
  if (blank === -1) return undefined;
  const headers: Part['headers'][number][] = [];
  const fields = /([^\s:]+):([^\r\n]*(?:\r\n[ \t][^\r\n]*)*)\r\n/y;
  fields.lastIndex = start;
  for (let match = fields.exec(mime); match && match.index < blank + 2; match = fields.exec(mime)) {
    headers.push({ name: (match[1] ?? '').toLowerCase(), value: (match[2] ?? '').replace(/\r\n[ \t]+/g, ' ').trim(), start: match.index, end: match.index + match[0].length });
  }
  const bodyStart = blank + 4;
  const ends = boundaries.map((boundary) => mime.indexOf(`\r\n--${boundary}`, bodyStart)).filter((at) => at !== -1);
  return { headerStart: start, bodyStart, bodyEnd: ends.length > 0 ? Math.min(...ends) : mime.length, headers };
}

function decodeQuotedPrintable(text: string): Buffer {
  const bytes = text.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_whole, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1');
}

function decodeBody(part: Part, body: string): string {
  const encoding = header(part, 'content-transfer-encoding').toLowerCase();
  const bytes = encoding === 'base64' ? Buffer.from(body, 'base64') : encoding === 'quoted-printable' ? decodeQuotedPrintable(body) : Buffer.from(body, 'latin1');
  return bytes.toString('utf8');
}

/** `mime` (a latin1 string) with its HTML part rewritten; undefined when it has none this can rewrite. */
export function rewriteMimeHtml(mime: string, rewrite: Rewrite): string | undefined {
  const boundaries = [...mime.matchAll(/boundary\s*=\s*(?:"([^"]+)"|([^\s;"]+))/gi)].map((match) => match[1] ?? match[2] ?? '');
  const starts = [0];
  for (const boundary of boundaries) {
    for (let at = mime.indexOf(`\r\n--${boundary}\r\n`); at !== -1; at = mime.indexOf(`\r\n--${boundary}\r\n`, at + 1)) starts.push(at + boundary.length + 6);
  }
  for (const start of starts.sort((a, b) => a - b)) {
    const part = readPart(mime, start, boundaries);
    if (!part) continue;
    const type = header(part, 'content-type').toLowerCase();
    if (!type.startsWith('text/html') || header(part, 'content-disposition').toLowerCase().startsWith('attachment')) continue;
    const charset = /charset\s*=\s*"?([^";\s]+)/.exec(type)?.[1] ?? 'us-ascii';
    if (!['utf-8', 'utf8', 'us-ascii'].includes(charset)) return undefined;
    const html = decodeBody(part, mime.slice(part.bodyStart, part.bodyEnd));
    const encoded = Buffer.from(rewrite(html), 'utf8').toString('base64').replace(/.{76}(?=.)/g, '$&\r\n');
    const kept = part.headers.filter((field) => field.name !== 'content-transfer-encoding').map((field) => mime.slice(field.start, field.end));
    return `${mime.slice(0, part.headerStart)}${kept.join('')}Content-Transfer-Encoding: base64\r\n\r\n${encoded}${mime.slice(part.bodyEnd)}`;
  }
  return undefined;
}
