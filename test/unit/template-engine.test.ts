/**
 * The template engine (functions/shared/templates/engine.ts) cross-checked against reference
 * Handlebars: for generated templates of the allowed subset and generated variables, whatever
 * renders renders exactly as a plain, non-strict Handlebars does (escaping in HtmlContent only,
 * `each` over arrays and objects, `if`/`unless` truthiness), and a variable the reference would
 * silently render as empty is instead reported, with the pointer of exactly that variable.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import Handlebars from 'handlebars';
import { checkTemplate, compileTemplate, renderTemplate } from '../../functions/shared/templates/engine';

const reference = Handlebars.create();
const NAMES = ['a', 'b', 'c'] as const;

/** A template of the subset over variables a, b, c (each a scalar, a list of { a } or an object). */
const template: fc.Arbitrary<string> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('x', ' <&> ', '"q"', "'", '\n'),
    fc.constantFrom(...NAMES).map((name) => `{{${name}}}`),
    fc.tuple(fc.constantFrom('if', 'unless'), fc.constantFrom(...NAMES), tie('body'), fc.option(tie('body'), { nil: undefined })).map(([block, name, body, otherwise]) =>
      `{{#${block} ${name}}}${body}${otherwise === undefined ? '' : `{{else}}${otherwise}`}{{/${block}}}`,
    ),
    fc.tuple(fc.constantFrom(...NAMES), fc.constantFrom('{{a}}', '{{this}}', '{{@index}}', '{{@key}}', '[{{@first}}]')).map(([name, body]) => `{{#each ${name}}}${body}{{/each}}`),
  ),
  body: fc.array(tie('node'), { maxLength: 3 }).map((parts) => parts.join('')),
})).body as fc.Arbitrary<string>;

const scalar = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('<b>', '&amp;', '"x"', "it's", '`=`'), fc.integer({ min: -5, max: 5 }), fc.boolean(), fc.constant(null));
// Spread into plain objects: variables come from JSON.parse, whose objects have Object.prototype.
const plain = <T extends object>(record: T): T => ({ ...record });
const value = fc.oneof(scalar, fc.array(fc.record({ a: scalar }).map(plain), { maxLength: 3 }), fc.record({ a: scalar }).map(plain), fc.constant([]));
const variables = fc.record({ a: value, b: value, c: value }, { requiredKeys: [] }).map(plain);

describe('the engine against reference Handlebars', () => {
  it('accepts every template of the subset', () => {
    fc.assert(fc.property(template, (source) => expect(checkTemplate({ Subject: 'x', TextContent: source, HtmlContent: source })).toEqual([])), { numRuns: 300 });
  });

  it('renders what it renders exactly as Handlebars does, escaping values in HtmlContent only', () => {
    let rendered = 0;
    fc.assert(
      fc.property(template, variables, (source, vars) => {
        const ours = renderTemplate(compileTemplate({ Subject: 'x', TextContent: source, HtmlContent: source }), vars);
        if (ours.problems.length > 0) return;
        rendered++;
        expect(ours.rendered.HtmlContent).toBe(reference.compile(source)(vars));
        expect(ours.rendered.TextContent).toBe(reference.compile(source, { noEscape: true })(vars));
      }),
      { numRuns: 500 },
    );
    expect(rendered).toBeGreaterThan(100);
  });

  it('reports a variable the reference would render as empty, at its pointer, and only such a one', () => {
    fc.assert(
      fc.property(fc.constantFrom(...NAMES), variables, (name, vars) => {
        const source = `{{#each list}}{{${name}}}{{/each}}`;
        const list = [vars, { [name]: 'present' }];
        const ours = renderTemplate(compileTemplate({ Subject: 'x', TextContent: source }), { list });
        const value: unknown = vars[name];
        const pointer = `/list/0/${name}`;
        // A list or object is reported too: the reference would write it as "[object Object]" or "a,b".
        const expected = !Object.hasOwn(vars, name)
          ? [{ kind: 'missing', pointer }]
          : typeof value === 'object' && value !== null
            ? [{ kind: 'notScalar', pointer, is: Array.isArray(value) ? 'a list' : 'an object' }]
            : [];
        expect(ours.problems).toEqual(expected);
        if (expected.length === 0) expect(ours.rendered.TextContent).toBe(reference.compile(source, { noEscape: true })({ list }));
      }),
      { numRuns: 200 },
    );
  });

  it('names a missing object by its pointer when a path reads through it, and then each other missing variable', () => {
    const compiled = compileTemplate({ Subject: 'Order {{order.id}}', TextContent: '{{order.total.amount}} for {{name}}, {{#if order.paid}}paid{{/if}}' });
    expect(renderTemplate(compiled, {}).problems).toEqual([{ kind: 'missing', pointer: '/order' }, { kind: 'missing', pointer: '/name' }]);
    expect(renderTemplate(compiled, { order: { id: 7 } }).problems).toEqual([{ kind: 'missing', pointer: '/order/total' }, { kind: 'missing', pointer: '/name' }]);
  });

  it('names a variable that is not an object when the template reads a name inside it, and blames no absent condition for it', () => {
    const compiled = compileTemplate({ Subject: 'x', TextContent: '{{#each a}}-{{/each}} {{#if b}}B{{/if}} {{c.d}}' });
    expect(renderTemplate(compiled, { a: [], b: 1, c: 'str' }).problems).toEqual([{ kind: 'notObject', pointer: '/c', is: 'string' }]);
    expect(renderTemplate(compiled, { a: [], c: null }).problems).toEqual([{ kind: 'notObject', pointer: '/c', is: 'null' }]);
    expect(renderTemplate(compiled, { c: { d: 7 } })).toEqual({ rendered: { Subject: 'x', TextContent: '  7' }, problems: [] });
    expect(renderTemplate(compileTemplate({ Subject: '{{order.lines.0.qty}}' }), { order: { lines: [3] } }).problems).toEqual([{ kind: 'notObject', pointer: '/order/lines/0', is: 'number' }]);
    // Falsy values too, which strict mode words itself ("not defined in false").
    for (const [value, is] of [['', 'string'], [0, 'number'], [false, 'boolean'], [null, 'null']] as const) {
      expect(renderTemplate(compileTemplate({ Subject: '{{user.name}}' }), { user: value }).problems).toEqual([{ kind: 'notObject', pointer: '/user', is }]);
    }
  });

  it('names a list or object put in the message as text, where Handlebars would write [object Object], in every field and in a loop', () => {
    for (const field of ['Subject', 'TextContent', 'HtmlContent'] as const) {
      const compiled = compileTemplate({ [field]: 'Hello {{name}}' } as never);
      expect(renderTemplate(compiled, { name: { first: 'Ann' } }).problems).toEqual([{ kind: 'notScalar', pointer: '/name', is: 'an object' }]);
      expect(renderTemplate(compiled, { name: ['Ann', 'Bo'] }).problems).toEqual([{ kind: 'notScalar', pointer: '/name', is: 'a list' }]);
      expect(renderTemplate(compiled, { name: 'Ann' })).toEqual({ rendered: { [field]: 'Hello Ann' }, problems: [] });
    }
    const loop = compileTemplate({ Subject: '{{#each items}}{{this}};{{/each}}' });
    expect(renderTemplate(loop, { items: ['a', { b: 1 }] }).problems).toEqual([{ kind: 'notScalar', pointer: '/items/1', is: 'an object' }]);
    expect(renderTemplate(loop, { items: ['a', 2, true] })).toEqual({ rendered: { Subject: 'a;2;true;' }, problems: [] });
    // Used as a condition, a list to loop over, or read inside, an object is what it should be.
    expect(renderTemplate(compileTemplate({ Subject: '{{#if o}}{{o.a}}{{/if}}{{#each o}}{{@key}}{{/each}}' }), { o: { a: 1 } }).problems).toEqual([]);
    // Once, though two fields print it.
    expect(renderTemplate(compileTemplate({ Subject: '{{name}}', TextContent: 'Hi {{name}}' }), { name: {} }).problems).toEqual([{ kind: 'notScalar', pointer: '/name', is: 'an object' }]);
    // No variable's text passes for the marker, nor hides the real one (it holds a nonce of the rendering).
    const forged = ['\u0000template-value-0\u0000', '\u0000x:0\u0000', '\u0000'];
    for (const text of forged) {
      expect(renderTemplate(compileTemplate({ Subject: 's', TextContent: '{{x}} {{name}}' }), { x: text, name: { a: 1 } }).problems).toEqual([{ kind: 'notScalar', pointer: '/name', is: 'an object' }]);
      expect(renderTemplate(compileTemplate({ Subject: 's', TextContent: '{{x}}' }), { x: text })).toEqual({ rendered: { Subject: 's', TextContent: text }, problems: [] });
    }
    // A missing name is still reported as missing, though strict mode prints the object to word its error.
    expect(renderTemplate(compileTemplate({ Subject: '{{o.missing}}' }), { o: { a: 1 } }).problems).toEqual([{ kind: 'missing', pointer: '/o/missing' }]);
  });

  it('names a name missing inside a list at its pointer, whatever the list holds (strict mode reads the items to word its error)', () => {
    const compiled = compileTemplate({ Subject: '{{order.items.total}}' });
    for (const items of [[], [{ p: 1 }], [1, 2], ['null'], [null, '']]) {
      expect(renderTemplate(compiled, { order: { items } }).problems).toEqual([{ kind: 'missing', pointer: '/order/items/total' }]);
    }
  });

  it('refuses at save a "../" that climbs above the variables, which could never render, and takes one out of an {{#each}}', () => {
    const climbs = (source: string) => checkTemplate({ Subject: 's', TextContent: source }).map((problem) => problem.detail);
    for (const source of ['{{../x}}', '{{#if a}}{{../x}}{{/if}}', '{{#each a}}{{../../x}}{{/each}}', '{{#each a}}-{{else}}{{../x}}{{/each}}']) {
      expect(climbs(source)).toEqual([expect.stringContaining('climbs above the variables')]);
    }
    for (const source of ['{{#each a}}{{../x}}{{/each}}', '{{#each a}}{{#if b}}{{../x}}{{/if}}{{/each}}', '{{#each a}}{{#each b}}{{../../x}}{{/each}}{{/each}}']) {
      expect(climbs(source)).toEqual([]);
      expect(renderTemplate(compileTemplate({ Subject: 's', TextContent: source }), { a: [{ b: [1] }], x: 'X' })).toEqual({ rendered: { Subject: 's', TextContent: 'X' }, problems: [] });
    }
  });

  it('reads a list\'s length, its own property, and reports it missing on an object that does not give it', () => {
    const compiled = compileTemplate({ Subject: '{{items.length}} items' });
    expect(checkTemplate({ Subject: '{{items.length}} items' })).toEqual([]);
    expect(renderTemplate(compiled, { items: ['a', 'b', 'c'] })).toEqual({ rendered: { Subject: '3 items' }, problems: [] });
    expect(renderTemplate(compiled, { items: {} }).problems).toEqual([{ kind: 'missing', pointer: '/items/length' }]);
  });

  it('lets a condition or a list be absent, as Handlebars does, and reads no inherited property', () => {
    const compiled = compileTemplate({ Subject: 'x', TextContent: '{{#if a}}A{{else}}no a{{/if}}{{#each b}}B{{/each}}{{#unless c}}no c{{/unless}}' });
    expect(renderTemplate(compiled, {})).toEqual({ rendered: { Subject: 'x', TextContent: 'no ano c' }, problems: [] });
    expect(renderTemplate(compileTemplate({ Subject: 'x', TextContent: '{{toString}}' }), {}).problems).toEqual([{ kind: 'missing', pointer: '/toString' }]);
    expect(checkTemplate({ Subject: '{{a.__proto__}}' })).toEqual([{ field: 'Subject', line: 1, detail: '"__proto__" names a built-in property, not a variable' }]);
  });
});
