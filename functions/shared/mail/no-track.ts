/**
 * Links a sender keeps out of click tracking (CONTRACT section 17 item 2): the sender marks them
 * `data-no-track`, and in tracked HTML that attribute becomes Amazon SES's own `ses:no-track`,
 * which SES (and the local stack's SES front, playing SES) leaves unrewritten.
 *
 * No HTML parser, and no single pattern for a whole start tag: "a tag whose quoted values may
 * hold `>`", retried at every `<a` of a body with an unclosed tag or quote, backtracked to 10 s for
 * 100 KB (quadratic). Instead the `<a`/`<area` starts are found, then each tag is read one step at
 * a time as the HTML tokenizer reads it (an attribute name, then `=` and a value, quoted or bare;
 * `>` ends the tag outside a quoted value), each step beginning where the last ended: no character
 * is read twice, so the work is linear in the body whatever it holds. A search for the attribute's
 * name decides first whether there is anything to do, so the common case costs one scan.
 * Untracked HTML never comes here.
 */

const MARK = 'data-no-track';
const SES_MARK = 'ses:no-track';
/** Where an `<a>` or `<area>` start tag's attributes begin (after its name). */
const LINK_START = /<(?:a|area)(?=[\t\n\f\r />])/gi;
/**
 * One step through a start tag, from where the last one ended (sticky): a `/`, the closing `>`,
 * or an attribute (a name running to a space, `/`, `>` or `=`, a leading `=` belonging to it,
 * then maybe `=` and a value, quoted or bare). Every character can begin a step, so the steps
 * run on to the tag's `>` or the body's end. A quoted value with no closing quote is read as
 * names instead: its opening quote is the last of its kind in the body, so that scan to the end
 * happens at most once per kind of quote.
 */
const STEP = /[\t\n\f\r ]*(?:(\/)|(>)|([^\t\n\f\r />][^\t\n\f\r />=]*)(?:[\t\n\f\r ]*=[\t\n\f\r ]*(?:"[^"]*"|'[^']*'|(?!["'])[^\t\n\f\r >]*))?)/y;

/** The HTML with each link's `data-no-track` attribute (and any value it had) written as `ses:no-track`. */
export function markNoTrack(html: string): string {
  if (!html.toLowerCase().includes(MARK)) return html;
  const parts: string[] = [];
  let copied = 0;
  LINK_START.lastIndex = 0;
  for (let link = LINK_START.exec(html); link; link = LINK_START.exec(html)) {
    STEP.lastIndex = LINK_START.lastIndex;
    let closed = false;
    for (let step = STEP.exec(html); step; step = STEP.exec(html)) {
      if (step[2]) {
        closed = true;
        break;
      }
      const name = step[3];
      if (name !== undefined && name.length === MARK.length && name.toLowerCase() === MARK) {
        parts.push(html.slice(copied, STEP.lastIndex - step[0].length + step[0].indexOf(name)), SES_MARK);
        copied = STEP.lastIndex;
      }
    }
    // The body ends inside this tag: nothing after it is a tag.
    if (!closed) break;
    LINK_START.lastIndex = STEP.lastIndex;
  }
  return copied === 0 ? html : parts.join('') + html.slice(copied);
}
