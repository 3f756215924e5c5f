import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { duplicateKeyPointers } from '../../functions/shared/http/json-duplicates';

describe('duplicateKeyPointers', () => {
  it('finds a duplicated top-level key', () => {
    expect(duplicateKeyPointers('{"OrganizationId":"a","OrganizationId":"b","Messages":[]}').pointers).toEqual(['/OrganizationId']);
  });

  it('points into arrays and nested objects, with escaped segments', () => {
    const text = '{"Messages":[{"To":["x"]},{"To":["a"], "Subject":"s" , "To":["b"]}],"a/b":{"k~":1,"k~":2}}';
    expect(duplicateKeyPointers(text).pointers).toEqual(['/Messages/1/To', '/a~1b/k~0']);
  });

  it('compares keys by their decoded value, and ignores look-alikes inside strings', () => {
    expect(duplicateKeyPointers('{"To":1,"\\u0054o":2}').pointers).toEqual(['/To']);
    expect(duplicateKeyPointers('{"a":"{\\"a\\":1,\\"a\\":2}","b":"\\\\"}').pointers).toEqual([]);
  });

  it('counts every duplicate past the listing limit, and lists only up to it', () => {
    const text = `{${Array.from({ length: 3_000 }, (_, i) => `"k":${i}`).join(',')}}`;
    const found = duplicateKeyPointers(text);
    expect(found.pointers).toEqual(Array.from({ length: 100 }, () => '/k'));
    expect(found.total).toBe(2_999);
  });

  it('allows the same key in different objects', () => {
    expect(duplicateKeyPointers('[{"a":1},{"a":2},{"b":{"a":3}}]').pointers).toEqual([]);
  });

  it('finds nothing in any JSON that JSON.stringify wrote (which cannot repeat a key)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(duplicateKeyPointers(JSON.stringify(value)).pointers).toEqual([]);
        expect(duplicateKeyPointers(JSON.stringify(value, null, 2)).pointers).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('finds a key repeated anywhere in an object JSON.stringify wrote', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.nat(), (object, pick) => {
        const keys = Object.keys(object);
        const key = keys[pick % keys.length]!;
        const text = JSON.stringify(object);
        const repeated = `${text.slice(0, -1)},${JSON.stringify(key)}:null}`;
        expect(duplicateKeyPointers(repeated).pointers).toEqual([`/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
      }),
      { numRuns: 300 },
    );
  });
});
