/**
 * What the local mail viewer adds to the SES emulator's (CONTRACT section 12: each message's
 * attachments, inline images, reply-to, custom headers and tags). The emulator keeps attachments,
 * reply-to and `Simple` content's headers, but not message tags, not the headers of `Raw` MIME, and
 * its HTML view leaves `cid:` images broken. The front of the emulator (`ses-rate-gate.ts`) hands
 * every accepted SendEmail to `record`, and passes the emulator's `/store` answer and viewer page
 * through `augmentStore` and `augmentPage`:
 *
 * - each stored email gains `tags` (the client's message tags, the service's own left out as in
 *   the status API) and, for `Raw` MIME, the custom `headers` and the `Bcc` the MIME cannot show;
 * - each header gains `decoded`, its value with RFC 2047 encoded-words decoded;
 * - `cid:` references in the HTML become `data:` URLs of the inline attachments, so the HTML view
 *   shows the images;
 * - a message sent through a tracked configuration set (functions/shared/mail/tracking.ts) gains
 *   `tracking` (`{ opens, clicks }`) and the page says "Tracked: opens, clicks"; its HTML is the
 *   one SES's tracking would deliver (pixel, rewritten links), as the front stored it;
 * - the viewer page lists headers and tags under the reply-to and attachment lines.
 */
import libmime from 'libmime';
import { SERVICE_TAGS, TEMPLATE_TAGS } from '../../functions/shared/mail/ses-message';
import { readTemplateReference } from '../../functions/shared/templates/template-rules';
import { isTracked, trackingOfConfigurationSet } from '../../functions/shared/mail/tracking';
import type { Tracking } from '../../functions/shared/mail/tracking';

type Json = Record<string, any>;

interface Extras {
  readonly tags: Record<string, string>;
  /** The template version the message was rendered from, from the service's own tags. */
  readonly template?: { readonly name: string; readonly version: number };
  /** Only for `Raw` MIME, whose headers and Bcc the emulator does not keep. */
  readonly headers?: { name: string; value: string }[];
  readonly bcc?: string[];
  /** Only for a message sent through a tracked configuration set. */
  readonly tracking?: Tracking;
}

/** Header fields the composer or the service writes on every `Raw` message: not custom ones. */
const STANDARD_HEADERS = new Set(['from', 'to', 'cc', 'bcc', 'reply-to', 'subject', 'message-id', 'date', 'mime-version']);

/** Every field of a MIME message's header block, unfolded, in order. */
export function headerFieldsOf(mime: string): { name: string; value: string }[] {
  const end = mime.search(/\r?\n\r?\n/);
  const block = (end === -1 ? mime : mime.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  return block.split(/\r?\n/).flatMap((line) => {
    const colon = line.indexOf(':');
    return colon <= 0 ? [] : [{ name: line.slice(0, colon), value: line.slice(colon + 1).trim() }];
  });
}

/** The custom header fields of a MIME message, in order. */
export function customHeadersOf(mime: string): { name: string; value: string }[] {
  return headerFieldsOf(mime).filter(({ name }) => {
    const lower = name.toLowerCase();
    return !STANDARD_HEADERS.has(lower) && !lower.startsWith('content-');
  });
}

/** The subject of a SendEmail request, `Simple` or `Raw`, decoded. */
export function subjectOf(request: Json): string {
  const raw = request.Content?.Raw?.Data;
  if (typeof raw !== 'string') return String(request.Content?.Simple?.Subject?.Data ?? '');
  const field = headerFieldsOf(Buffer.from(raw, 'base64').toString('utf8')).find(({ name }) => name.toLowerCase() === 'subject');
  return field ? decode(field.value) : '';
}

function decode(value: string): string {
  try {
    return libmime.decodeWords(value);
  } catch {
    return value;
  }
}

export interface MailViewer {
  /** An accepted SendEmail: the request body and the emulator's answer. */
  record(request: Buffer, answer: Buffer): void;
  augmentStore(store: Json): Json;
  augmentPage(html: string): string;
}

/** How many sent messages' extras are kept (the emulator keeps every message; this is only the viewer's). */
const KEPT = 10_000;

export function createMailViewer(): MailViewer {
  const extras = new Map<string, Extras>();
  return {
    record(request, answer) {
      let body: Json;
      let messageId: unknown;
      try {
        body = JSON.parse(request.toString('utf8')) as Json;
        messageId = (JSON.parse(answer.toString('utf8')) as Json).MessageId;
      } catch {
        return;
      }
      if (typeof messageId !== 'string') return;
      const tags: Record<string, string> = {};
      for (const tag of Array.isArray(body.EmailTags) ? body.EmailTags : []) {
        if (typeof tag?.Name === 'string' && !SERVICE_TAGS.includes(tag.Name)) tags[tag.Name] = String(tag.Value);
      }
      const raw = body.Content?.Raw?.Data;
      const mime = typeof raw === 'string' ? Buffer.from(raw, 'base64').toString('utf8') : undefined;
      // The template version it was rendered from (CONTRACT section 14), from the service's own tags.
      const tagValue = (name: string) => (Array.isArray(body.EmailTags) ? body.EmailTags : []).find((tag: Json) => tag?.Name === name)?.Value;
      const template = readTemplateReference({ name: tagValue(TEMPLATE_TAGS.name), version: tagValue(TEMPLATE_TAGS.version) });
      const tracking = trackingOfConfigurationSet(typeof body.ConfigurationSetName === 'string' ? body.ConfigurationSetName : undefined);
      extras.set(messageId, {
        ...(isTracked(tracking) && { tracking }),
        tags,
        ...(template && { template }),
        ...(mime !== undefined && { headers: customHeadersOf(mime), bcc: body.Destination?.BccAddresses ?? [] }),
      });
      if (extras.size > KEPT) extras.delete(extras.keys().next().value as string);
    },

    augmentStore(store) {
      const emails: Json[] = Array.isArray(store.emails) ? store.emails : [];
      return {
        ...store,
        emails: emails.map((email) => {
          const extra = extras.get(email.messageId);
          const headers: { name: string; value: string }[] = extra?.headers ?? email.headers ?? [];
          return {
            ...email,
            ...(extra?.bcc && { destination: { ...email.destination, bcc: extra.bcc } }),
            headers: headers.map((header) => ({ ...header, decoded: decode(header.value) })),
            tags: extra?.tags ?? {},
            ...(extra?.template && { template: extra.template }),
            ...(extra?.tracking && { tracking: extra.tracking }),
            body: { ...email.body, ...(typeof email.body?.html === 'string' && { html: inlineImages(email.body.html, email.attachments ?? []) }) },
          };
        }),
      };
    },

    augmentPage(html) {
      return PAGE_CHANGES.reduce(
        (page, group) => (group.every(([anchor]) => page.includes(anchor)) ? group.reduce((changed, [anchor, replacement]) => changed.replace(anchor, () => replacement), page) : page),
        html,
      );
    },
  };
}

/** `cid:` references replaced by `data:` URLs of the attachments with that content id. */
function inlineImages(html: string, attachments: Json[]): string {
  const byId = new Map<string, Json>();
  for (const attachment of attachments) {
    const id = typeof attachment.contentId === 'string' ? attachment.contentId.replace(/^<|>$/g, '') : typeof attachment.cid === 'string' ? attachment.cid : undefined;
    if (id) byId.set(id, attachment);
  }
  if (byId.size === 0) return html;
  return html.replace(/cid:([^"'\s)>]+)/g, (whole, id: string) => {
    const attachment = byId.get(id);
    return attachment ? `data:${attachment.contentType ?? 'application/octet-stream'};base64,${attachment.content}` : whole;
  });
}

// The emulator's page renders each email from a template literal; the addition goes in before its
// attachments line and uses the page's own `escape`.
const PAGE_ANCHOR = '${e.attachments.length ?';
const PAGE_ADDITION = [
  "${(e.headers ?? []).length ? `<p><b>Headers:</b></p><ul class=\"email-headers\">${e.headers.map(h => '<li>' + escape(h.name) + ': ' + escape(h.decoded ?? h.value) + '</li>').join('')}</ul>` : ''}",
  "${e.tracking ? `<p class=\"email-tracking\"><b>Tracked:</b> ${[e.tracking.opens ? 'opens' : '', e.tracking.clicks ? 'clicks' : ''].filter(Boolean).join(', ')} (the HTML is shown as sent, with the pixel and tracked links)</p>` : ''}",
  "${e.template ? `<p class=\"email-template\"><b>Template:</b> ${escape(e.template.name)}, version ${escape(String(e.template.version))}</p>` : ''}",
  "${Object.keys(e.tags ?? {}).length ? `<p class=\"email-tags\"><b>Tags:</b> ${escape(Object.entries(e.tags).map(([k, v]) => k + '=' + v).join(', '))}</p>` : ''}",
].join('\n                    ');

/**
 * The emulator's page writes every message's HTML into a hidden iframe of its own origin as soon as
 * it lists it: each tracked message's pixel loaded, an Open recorded for every message merely
 * listed, and the message's own script run in the viewer's origin. So a message's HTML goes in
 * when its HTML view is first shown, into a new iframe (in place of the page's empty one) born
 * sandboxed, with no script and an origin of its own (`srcdoc`); its links open in a new tab, as a
 * mail client's do.
 */
const FILL_ANCHOR = [
  "                    if (e.body.html) {",
  "                        const iframe = document.getElementById(`${e.messageId}-html-iframe`);",
  "                        const iframeDoc = (iframe.contentDocument || iframe.contentWindow.document);",
  "                        iframeDoc.body.innerHTML = e.body.html;",
  "                    }",
].join('\n');
const FILL_ON_SHOW = "                    if (e.body.html) unshownHtml[`${e.messageId}-html`] = e.body.html;";
const TOGGLE_ANCHOR = ['        const toggle = (id) => {', '            const elem = document.getElementById(id)'].join('\n');
const TOGGLE_FILLING = [
  '        const unshownHtml = {};',
  '        const fillHtml = (id) => {',
  '            if (!(id in unshownHtml)) return;',
  "            const frame = document.createElement('iframe');",
  "            frame.id = id + '-iframe';",
  "            frame.setAttribute('sandbox', 'allow-popups allow-popups-to-escape-sandbox');",
  "            frame.srcdoc = '<base target=\"_blank\">' + unshownHtml[id];",
  "            document.getElementById(id + '-iframe').replaceWith(frame);",
  '            delete unshownHtml[id];',
  '        }',
  TOGGLE_ANCHOR.replace('{', '{\n            fillHtml(id)'),
].join('\n');

/**
 * What `augmentPage` changes in the emulator's page, in groups of [anchor, replacement]: a group
 * is applied only when every anchor of it is in the page, so a page of another version of the
 * emulator is shown as it is, never half changed.
 */
const PAGE_CHANGES: readonly (readonly (readonly [string, string])[])[] = [
  [[PAGE_ANCHOR, `${PAGE_ADDITION}\n                    ${PAGE_ANCHOR}`]],
  [
    [FILL_ANCHOR, FILL_ON_SHOW],
    [TOGGLE_ANCHOR, TOGGLE_FILLING],
  ],
];
