import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { duplicateKeyPointers } from '../../functions/shared/http/json-duplicates';

describe('duplicateKeyPointers', () => {
  it('finds a duplicated top-level key', () => {
    expect(duplicateKeyPointers('{"OrganizationId":"a","OrganizationId":"b","Messages":[]}')).toEqual(['/OrganizationId']);
  });

  it('points into arrays and nested objects, with escaped segments', () => {
    const text = '{"Messages":[{"To":["x"]},{"To":["a"], "Subject":"s" , "To":["b"]}],"a/b":{"k~":1,"k~":2}}';
    expect(duplicateKeyPointers(text)).toEqual(['/Messages/1/To', '/a~1b/k~0']);
  });

  it('compares keys by their decoded value, and ignores look-alikes inside strings', () => {
    expect(duplicateKeyPointers('{"To":1,"\\u0054o":2}')).toEqual(['/To']);
    expect(duplicateKeyPointers('{"a":"{\\"a\\":1,\\"a\\":2}","b":"\\\\"}')).toEqual([]);
  });

  it('allows the same key in different objects', () => {
    expect(duplicateKeyPointers('[{"a":1},{"a":2},{"b":{"a":3}}]')).toEqual([]);
  });

  it('finds nothing in any JSON that JSON.stringify wrote (which cannot repeat a key)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(duplicateKeyPointers(JSON.stringify(value))).toEqual([]);
        expect(duplicateKeyPointers(JSON.stringify(value, null, 2))).toEqual([]);
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
        expect(duplicateKeyPointers(repeated)).toEqual([`/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
      }),
      { numRuns: 300 },
    );
  });
});
