import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { NO_TRACKING } from '../../functions/shared/mail/tracking';
import type { Tracking } from '../../functions/shared/mail/tracking';
import { decodeAttribute, pixelTag, rewriteHtml } from '../../infra/local/tracking-rewrite';

const URLS = { open: 'https://track.test/open', click: (index: number) => `https://track.test/click/${index}` };
const rewrite = (html: string, tracking: Tracking) => rewriteHtml(html, tracking, URLS);
const BOTH = { opens: true, clicks: true };
const CLICKS = { opens: false, clicks: true };
const OPENS = { opens: true, clicks: false };

/** A piece of a generated message: text, or a link tag with everything that decides its fate. */
type Part =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'link'; readonly tag: 'a' | 'A' | 'area'; readonly url: string; readonly quote: '"' | "'" | ''; readonly space: string; readonly noTrack: 'none' | 'before' | 'after'; readonly title: string };

/** An attribute value as an HTML writer escapes it for that quoting. */
function escapeFor(value: string, quote: '"' | "'" | ''): string {
  const amp = value.replace(/&/g, '&amp;');
  return quote === '"' ? amp.replace(/"/g, '&quot;') : quote === "'" ? amp.replace(/'/g, '&#39;') : amp;
}

/** The HTML of `parts`; with tracking, each link as the rewriter must leave it. */
function render(parts: readonly Part[], tracking: Tracking = NO_TRACKING): { html: string; links: string[] } {
  const { clicks } = tracking;
  const tracked = tracking.opens || tracking.clicks;
  const links: string[] = [];
  const html = parts
    .map((part) => {
      if (part.kind === 'text') return part.text;
      const noTrack = (where: 'before' | 'after') => (part.noTrack === where && !tracked ? ' ses:no-track' : '');
      const title = ` title="${escapeFor(part.title, '"')}"`;
      const trackable = /^https?:\/\//i.test(part.url) && part.noTrack === 'none';
      if (clicks && trackable) {
        links.push(part.url);
        return `<${part.tag}${noTrack('before')}${title} href="${URLS.click(links.length - 1)}"${noTrack('after')}>`;
      }
      const href = `href${part.space}=${part.space}${part.quote}${escapeFor(part.url, part.quote)}${part.quote}`;
      return `<${part.tag}${noTrack('before')}${title} ${href}${noTrack('after')}>`;
    })
    .join('');
  return { html, links };
}

const text = fc.string({ unit: fc.constantFrom('a', ' ', '\n', '>', '"', "'", '&', 'é', '😀', 'x'), maxLength: 20 }).map((value) => ({ kind: 'text' as const, text: value }));
const url = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.constantFrom('mailto:bob@example.org?subject=Hi&body=x', 'tel:+441234567890', '#top', 'ftp://files.example.org/a', 'HTTPS://EXAMPLE.ORG/A?b=1&c="2"', "https://example.org/it's"),
);
const link = fc
  .record({
    tag: fc.constantFrom('a' as const, 'A' as const, 'area' as const),
    url,
    quote: fc.constantFrom('"' as const, "'" as const, '' as const),
    space: fc.constantFrom('', ' '),
    noTrack: fc.constantFrom('none' as const, 'none' as const, 'before' as const, 'after' as const),
    title: fc.string({ unit: fc.constantFrom('a', '>', "'", '&', ' '), maxLength: 6 }),
  })
  // An unquoted value cannot hold what would end it; such a URL is written quoted.
  .map((part) => ({ kind: 'link' as const, ...part, quote: part.quote === '' && /[\s"'=<>`]/.test(part.url) ? ('"' as const) : part.quote }));
const message = fc.array(fc.oneof(text, link), { maxLength: 12 });
const RUNS = { seed: 3717, numRuns: 400 };

describe('rewriteHtml (the local SES front playing open and click tracking)', () => {
  it('leaves untracked HTML byte for byte as it was', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), message.map((parts) => render(parts).html)), (html) => {
        expect(rewrite(html, NO_TRACKING)).toEqual({ html, links: [] });
      }),
      RUNS,
    );
  });

  it('rewrites exactly the http(s) links, each to a tracking URL that leads back to the URL the browser would follow', () => {
    fc.assert(
      fc.property(message, (parts) => {
        const before = render(parts).html;
        const expected = render(parts, CLICKS);
        const result = rewrite(before, CLICKS);
        // Everything else (mailto:, tel:, #anchors, other schemes, text) is untouched, and
        // ses:no-track links only lose that attribute.
        expect(result.html).toBe(expected.html);
        expect(result.links).toEqual(expected.links);
      }),
      RUNS,
    );
  });

  it('adds the pixel before the last </body>, or at the end, and rewrites no link when only opens are tracked', () => {
    fc.assert(
      fc.property(message, fc.constantFrom('', '</body>', '</BODY >', '</body></html>\n'), (parts, ending) => {
        const html = `<html><body>${render(parts).html}${ending}`;
        const expected = `<html><body>${render(parts, OPENS).html}${ending}`;
        const at = ending === '' ? expected.length : expected.length - ending.length;
        expect(rewrite(html, OPENS)).toEqual({ html: expected.slice(0, at) + pixelTag(URLS.open) + expected.slice(at), links: [] });
      }),
      RUNS,
    );
  });

  it('puts the pixel where it loads: not before a </body> inside a comment', () => {
    const pixel = pixelTag(URLS.open);
    expect(rewrite('<html><body>Hi</BODY></html><!-- trailing </body> -->', OPENS).html).toBe(`<html><body>Hi${pixel}</BODY></html><!-- trailing </body> -->`);
    expect(rewrite('<body>Hi<!-- </body> --></body>', OPENS).html).toBe(`<body>Hi<!-- </body> -->${pixel}</body>`);
    // Only comments that hide it: none anywhere, or an unclosed one, puts it at the end.
    expect(rewrite('<p>Hi</p><!-- </body>', OPENS).html).toBe(`<p>Hi</p><!-- </body>${pixel}`);
  });

  it('rewrites a realistic message as SES does', () => {
    const html = [
      '<html><body>',
      '<p>Hi <a href="https://shop.example/order?id=7&amp;ref=mail">your order</a>,',
      '<a href="mailto:help@shop.example">mail us</a>, <a href="tel:+15555550100">call</a>, <a href="#terms">terms</a>,',
      '<a ses:no-track href="https://shop.example/unsubscribe">unsubscribe</a>',
      "<A class='btn' HREF='http://shop.example/a'>go</A></p>",
      '</body></html>',
    ].join('\n');
    const { html: out, links } = rewrite(html, BOTH);
    expect(links).toEqual(['https://shop.example/order?id=7&ref=mail', 'http://shop.example/a']);
    expect(out).toContain('<a href="https://track.test/click/0">your order</a>');
    expect(out).toContain("<A class='btn' href=\"https://track.test/click/1\">go</A>");
    expect(out).toContain('<a href="mailto:help@shop.example">');
    expect(out).toContain('<a href="tel:+15555550100">');
    expect(out).toContain('<a href="#terms">');
    expect(out).toContain('<a href="https://shop.example/unsubscribe">unsubscribe</a>');
    expect(out).not.toContain('ses:no-track');
    expect(out.endsWith(`${pixelTag(URLS.open)}</body></html>`)).toBe(true);
  });

  it('leaves broken tags as they are, in one pass (no scan per unfinished <a)', () => {
    for (const html of ['<a '.repeat(100_000), `<a title="${'x'.repeat(100_000)}`, `<a href=https://x.example/${'<a '.repeat(50_000)}`]) {
      expect(rewrite(html, CLICKS)).toEqual({ html, links: [] });
    }
  });

  it('reads attribute values as a browser does', () => {
    expect(decodeAttribute(' https://a.example/?x=1&amp;y=&#50;&#x33;&quot;&unknown; ')).toBe('https://a.example/?x=1&y=23"&unknown;');
    expect(decodeAttribute('&#0;&#x110000;')).toBe('&#0;&#x110000;');
    // The quick path for values whose only references are `&amp;`, beside its neighbours.
    expect(decodeAttribute(' https://a.example/?a=1&amp;b=2&amp;amp;c ')).toBe('https://a.example/?a=1&b=2&amp;c');
    expect(decodeAttribute('https://a.example/?a=1&AMP;b=2&amp;c=3')).toBe('https://a.example/?a=1&b=2&c=3');
    expect(decodeAttribute('https://a.example/?a=1&ampb&amp;c')).toBe('https://a.example/?a=1&b&c');
  });
});
