/**
 * Links a sender keeps out of click tracking (CONTRACT section 17 item 2): the sender marks them
 * `data-no-track`, and in tracked HTML that attribute becomes Amazon SES's own `ses:no-track`,
 * which SES (and the local stack's SES front, playing SES) leaves unrewritten.
 *
 * No HTML parser: a search for the attribute's name decides whether there is anything to do (the
 * common case costs one scan), and only then are `<a>` and `<area>` start tags read, each
 * attribute in turn, quoted values skipped whole, so a `data-no-track` in text, in another
 * element or inside an attribute value is left as written. Untracked HTML never comes here.
 */

const MARK = 'data-no-track';
const SES_MARK = 'ses:no-track';
/** A link's start tag; quoted values may hold `>`. */
const LINK_TAG = /<(a|area)(?=[\s/>])((?:[^>"']|"[^"]*"|'[^']*')*)>/gi;
/** One attribute: its name, then an optional value (quoted or bare). */
const ATTRIBUTE = /([^\s"'>/=]+)(\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?/g;

/** The HTML with each link's `data-no-track` attribute (and any value it had) written as `ses:no-track`. */
export function markNoTrack(html: string): string {
  if (!html.toLowerCase().includes(MARK)) return html;
  return html.replace(LINK_TAG, (tag: string, name: string, attributes: string) => {
    if (!attributes.toLowerCase().includes(MARK)) return tag;
    const rewritten = attributes.replace(ATTRIBUTE, (attribute: string, attributeName: string) => (attributeName.toLowerCase() === MARK ? SES_MARK : attribute));
    return `<${name}${rewritten}>`;
  });
}
