/**
 * What Amazon SES does to the HTML of a message sent through a configuration set with open or
 * click tracking, played by the local SES front (CONTRACT section 17, items 2 and 5):
 *
 * - opens: a 1x1 image whose URL is the open pixel, before the last `</body>` outside a comment
 *   (at the end when there is none);
 * - clicks: the `href` of each `<a>` and `<area>` tag whose URL is `http:` or `https:` becomes a
 *   tracking URL; `mailto:`, `tel:`, `#anchors` and any other scheme stay as they are, and so does
 *   a link carrying SES's `ses:no-track` attribute;
 * - either: `ses:no-track` attributes are removed (SES's own markup, which it does not deliver).
 *
 * Nothing else changes: untracked HTML is returned as the very same string, and the text part
 * and headers are never handed here. The original URL a link leads to is the attribute's value
 * as a browser reads it (character references `&amp;`, `&#38;`, `&#x26;`, `&quot;`, `&apos;`,
 * `&lt;`, `&gt;` decoded, surrounding whitespace dropped), so the redirect goes where the link
 * would have gone.
 *
 * It is one pass of one regular expression over the tags (quoted attribute values may hold `>`),
 * with a second, small one over the attributes of each `<a>`/`<area>` it finds: a 100 KB body is
 * rewritten well under a millisecond (`npm run bench -- --tracking`).
 */
import type { Tracking } from '../../functions/shared/mail/tracking';

export interface TrackingUrls {
  /** The open pixel's URL. */
  readonly open: string;
  /** The tracking URL of the `index`-th rewritten link (0-based, in document order). */
  click(index: number): string;
}

export interface RewrittenHtml {
  readonly html: string;
  /** The original URL of each rewritten link, by index. */
  readonly links: readonly string[];
}

/**
 * `<a …>` and `<area …>` start tags, attribute values quoted or not (a quoted value may hold `>`).
 * Written as an unrolled loop (runs of plain characters between quoted values): each step has one
 * way to match, so nothing backtracks. An unquoted `<` ends the attempt, so HTML full of `<a`
 * without a `>` costs one scan, not one per `<a` (such a tag, an HTML parse error anyway, is left
 * as it is).
 */
const LINK_TAG = /<(?:a|area)(?=[\s/>])[^<>"']*(?:(?:"[^"]*"|'[^']*')[^<>"']*)*>/gi;
/** One attribute: its leading whitespace, its name, and its value in whichever quoting it has. */
const ATTRIBUTE = /(\s+)([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
const TRACKABLE = /^https?:\/\//i;
const NO_TRACK = 'ses:no-track';
/** A comment (to its end, or to the end of the text when unclosed), or a `</body>` tag outside one. */
const BODY_END = /<!--[\s\S]*?(?:-->|$)|<\/body\s*>/gi;

const NAMED: Record<string, string> = { amp: '&', quot: '"', apos: "'", lt: '<', gt: '>' };
/** A character reference other than a lower-case `&amp;`. */
const OTHER_REFERENCE = /&(?!amp;)/;

/** An attribute value as a browser reads it (the references that occur in URLs). */
export function decodeAttribute(value: string): string {
  if (!value.includes('&')) return value.trim();
  // The usual case, query strings: only `&amp;`, taken without a callback per reference.
  if (!OTHER_REFERENCE.test(value)) return value.replaceAll('&amp;', '&').trim();
  return value
    .replace(/&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|(amp|quot|apos|lt|gt));?/gi, (whole, dec: string | undefined, hex: string | undefined, name: string | undefined) => {
      if (name) return NAMED[name.toLowerCase()] ?? whole;
      const code = dec ? Number(dec) : Number.parseInt(hex ?? '', 16);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .trim();
}

/** The pixel as SES adds it: an image a recipient does not see. */
export function pixelTag(url: string): string {
  return `<img src="${url}" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;
}

/** With `urls` undefined, only the `ses:no-track` attributes go. */
function rewriteLinks(html: string, urls: TrackingUrls | undefined, links: string[]): string {
  return html.replace(LINK_TAG, (tag) => {
    let href: { start: number; end: number; space: string; url: string } | undefined;
    let noTrack: { start: number; end: number } | undefined;
    // Attributes start after the tag name (`a` or `area`, whichever LINK_TAG matched).
    ATTRIBUTE.lastIndex = tag.charCodeAt(2) === 0x72 || tag.charCodeAt(2) === 0x52 ? 5 : 2;
    for (let match = ATTRIBUTE.exec(tag); match; match = ATTRIBUTE.exec(tag)) {
      const name = match[2]?.toLowerCase();
      if (name === NO_TRACK) noTrack = { start: match.index, end: match.index + match[0].length };
      else if (name === 'href' && href === undefined) {
        // The first href is the one a browser follows; its value is the last group that matched.
        const value = match[3] ?? match[4] ?? match[5];
        if (value === undefined) continue;
        href = { start: match.index, end: match.index + match[0].length, space: match[1] ?? ' ', url: decodeAttribute(value) };
      }
    }
    if (noTrack) return tag.slice(0, noTrack.start) + tag.slice(noTrack.end);
    if (!urls || !href || !TRACKABLE.test(href.url)) return tag;
    const index = links.push(href.url) - 1;
    return `${tag.slice(0, href.start)}${href.space}href="${urls.click(index)}"${tag.slice(href.end)}`;
  });
}

function addPixel(html: string, url: string): string {
  let at = -1;
  BODY_END.lastIndex = 0;
  // A `</body>` inside a comment is text, not the end of the body: a pixel there would never load.
  for (let match = BODY_END.exec(html); match; match = BODY_END.exec(html)) if (!match[0].startsWith('<!--')) at = match.index;
  const pixel = pixelTag(url);
  return at === -1 ? html + pixel : html.slice(0, at) + pixel + html.slice(at);
}

/** `html` as SES would send it with `tracking`: the same string when nothing is tracked. */
export function rewriteHtml(html: string, tracking: Tracking, urls: TrackingUrls): RewrittenHtml {
  const links: string[] = [];
  let out = html;
  if (tracking.clicks || tracking.opens) out = rewriteLinks(out, tracking.clicks ? urls : undefined, links);
  if (tracking.opens) out = addPixel(out, urls.open);
  return { html: out, links };
}
