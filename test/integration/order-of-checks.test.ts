/**
 * The order of checks is stated twice, for two readers: docs/decisions.md and the OpenAPI
 * document's description. This keeps the two one text; the contract suite checks the order itself.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The arrow-separated list after "**Order of checks.**", up to its closing "send.". */
function orderIn(text: string): string[] {
  const start = text.indexOf('**Order of checks.**');
  expect(start).toBeGreaterThanOrEqual(0);
  const list = text.slice(start + '**Order of checks.**'.length, text.indexOf('→ send.', start) + '→ send.'.length);
  return list.replace(/\s+/g, ' ').split('→').map((step) => step.trim().replace(/\.$/, ''));
}

describe('the order of checks', () => {
  it('is the same list in docs/decisions.md and in openapi.json', () => {
    const readme = orderIn(read('docs/decisions.md'));
    const openapi = orderIn((JSON.parse(read('openapi.json')) as { info: { description: string } }).info.description);
    expect(openapi).toEqual(readme);
    // 401 for a missing key before 413/415, and for an unknown key before any 400 about the body.
    const at = (needle: string) => readme.findIndex((step) => step.includes(needle));
    expect(at('missing or malformed API key (401)')).toBeLessThan(at('(413)'));
    expect(at('unknown, rotated or revoked API key (401)')).toBeLessThan(at('JSON syntax'));
  });
});
