/**
 * The template engine: Handlebars 4 (the reference implementation, the syntax Amazon SES templates
 * use), held to a small, safe subset. Loaded with a dynamic `import()` only when a template is
 * checked or rendered, so a send without one never pays for it at cold start.
 *
 * Safety, in three layers:
 * 1. **The subset** (`checkTemplate`): `{{path}}`, `{{#if}}`, `{{#unless}}`, `{{#each}}` (with
 *    `{{else}}`, block parameters and `@index`/`@key`/`@first`/`@last`/`@root`), comments. No
 *    partials, decorators, custom or built-in helpers beyond those three, sub-expressions, literal
 *    arguments, triple-stash or `{{&}}` (they would skip the HTML escaping), and no path segment
 *    that names a prototype member (`constructor`, `__proto__`, …). Refused with the field and
 *    line, before anything is stored.
 * 2. **Strict mode** on a private Handlebars environment with only `if`, `unless` and `each`
 *    registered, prototype access off (Handlebars' default since 4.6).
 * 3. **Variables seen through a proxy** (watched-variables.ts) that counts every lookup (nested
 *    `{{#each}}` multiply: a rendering past `TEMPLATE_LIMITS.renderSteps` stops) and records the
 *    JSON pointer of a missing variable, so the client learns `/Variables/user/firstName`, not
 *    Handlebars' `[object Object]`.
 *
 * Values are HTML-escaped in `HtmlContent` only (Handlebars' own escaping); `Subject` and
 * `TextContent` get them as written.
 */
import { randomBytes } from 'node:crypto';
import Handlebars from 'handlebars';
import type { TemplateContent, TemplateField } from './template-rules';
import { TEMPLATE_FIELDS, TEMPLATE_LIMITS } from './template-rules';
import type { Tracking } from './watched-variables';
import { RenderBudgetExceeded, isLookupIn, printedNotScalar, watch } from './watched-variables';

type Node = { readonly type: string; readonly loc?: { readonly start: { readonly line: number } } } & Record<string, unknown>;
type Path = Node & { readonly original: string; readonly parts: readonly string[]; readonly data: boolean; readonly depth?: number; readonly head?: unknown };

/** A problem in one field of a template's source, at a line. */
export interface SourceProblem {
  readonly field: TemplateField;
  readonly line: number | undefined;
  readonly detail: string;
}

/** A problem while rendering: a missing variable (its pointer below `Variables`), or a field at fault. */
export type RenderProblem =
  | { readonly kind: 'missing'; readonly pointer: string }
  /** A variable the template reads a name in (`{{c.d}}`) that is not an object: `is` says what it is. */
  | { readonly kind: 'notObject'; readonly pointer: string; readonly is: string }
  /** A list or object the template puts in the message as text (`{{order}}`). */
  | { readonly kind: 'notScalar'; readonly pointer: string; readonly is: 'a list' | 'an object' }
  | { readonly kind: 'field'; readonly field: TemplateField; readonly detail: string };

export type Rendered = Partial<Record<TemplateField, string>>;

const BLOCK_HELPERS = new Set(['if', 'unless', 'each']);
const DATA_VARIABLES = new Set(['index', 'key', 'first', 'last', 'root']);
/** Names Handlebars knows as helpers: as a bare `{{name}}` they would call it, not read a variable. */
const HELPER_NAMES = new Set([...BLOCK_HELPERS, 'with', 'lookup', 'log', 'helperMissing', 'blockHelperMissing']);
/**
 * Names of built-in properties, refused as variable names. Not `length`: a list's own property
 * (`{{items.length}}`), read as any variable is, and missing on an object that does not give it.
 */
const PROTOTYPE_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype), '__proto__', 'prototype'].filter((name) => name !== 'length'));

// A private environment: nothing registered elsewhere in the process can reach these templates.
const engine = Handlebars.create();
for (const helper of ['with', 'lookup', 'log']) engine.unregisterHelper(helper);
const COMPILE_OPTIONS = { strict: true, knownHelpersOnly: true, knownHelpers: { if: true, unless: true, each: true } } as const;

class SubsetWalker {
  readonly problems: SourceProblem[] = [];
  /** How many `{{#each}}` bodies enclose the node: how far `../` may climb (`{{#if}}` and `{{#unless}}` keep the context). */
  private eachDepth = 0;
  constructor(private readonly field: TemplateField) {}

  private refuse(node: Node, detail: string): void {
    this.problems.push({ field: this.field, line: node.loc?.start.line, detail });
  }

  private path(node: Node, role: string): void {
    if (node.type !== 'PathExpression') {
      this.refuse(node, `${role} must be a variable name, not a ${node.type.replace(/Literal$/, '').toLowerCase()} literal or sub-expression`);
      return;
    }
    const path = node as Path;
    if (path.data && !DATA_VARIABLES.has(String(path.parts[0] ?? (path.head as { original?: string } | undefined)?.original))) {
      this.refuse(node, `"@${path.parts[0] ?? ''}" is not one of @index, @key, @first, @last, @root`);
    }
    const named = path.parts.find((part) => PROTOTYPE_NAMES.has(part));
    if (named !== undefined) this.refuse(node, `"${named}" names a built-in property, not a variable`);
    if ((path.depth ?? 0) > this.eachDepth) this.refuse(node, `"${path.original}" climbs above the variables with "../": it may go up only out of an enclosing {{#each}}`);
  }

  walk(node: Node | undefined): void {
    if (!node) return;
    switch (node.type) {
      case 'Program':
        for (const statement of node.body as Node[]) this.walk(statement);
        return;
      case 'ContentStatement':
      case 'CommentStatement':
        return;
      case 'MustacheStatement': {
        const path = node.path as Path;
        if (!node.escaped) this.refuse(node, 'triple braces "{{{ }}}" and "{{& }}" are not allowed: every value is escaped as its field requires');
        if ((node.params as Node[]).length > 0 || node.hash) this.refuse(node, `"{{${path.original ?? ''} …}}" calls a helper; only {{variable}}, {{#if}}, {{#unless}} and {{#each}} are allowed`);
        else if (path.type === 'PathExpression' && HELPER_NAMES.has(path.original)) this.refuse(node, `"{{${path.original}}}" is a helper name, not a variable`);
        else this.path(path, 'a {{value}}');
        return;
      }
      case 'BlockStatement': {
        const path = node.path as Path;
        const params = node.params as Node[];
        if (!BLOCK_HELPERS.has(path.original)) {
          this.refuse(node, `"{{#${path.original ?? ''}}}" is not allowed; the blocks are {{#if}}, {{#unless}} and {{#each}}`);
          return;
        }
        if (params.length !== 1 || node.hash) this.refuse(node, `{{#${path.original}}} takes exactly one variable`);
        else this.path(params[0] as Node, `the argument of {{#${path.original}}}`);
        // The body of an {{#each}} runs in each item's context, one level down; its {{else}} does not.
        const down = path.original === 'each' ? 1 : 0;
        this.eachDepth += down;
        this.walk(node.program as Node | undefined);
        this.eachDepth -= down;
        this.walk(node.inverse as Node | undefined);
        return;
      }
      case 'PartialStatement':
      case 'PartialBlockStatement':
        this.refuse(node, 'partials ("{{> name}}") are not allowed');
        return;
      default:
        this.refuse(node, `"${node.type}" is not allowed; only {{variable}}, {{#if}}, {{#unless}} and {{#each}} are`);
    }
  }
}

/** Handlebars' parse errors say "Parse error on line N:" and then draw the spot; the first line of the reason is enough. */
function parseProblem(field: TemplateField, error: unknown): SourceProblem {
  const message = error instanceof Error ? error.message : String(error);
  const line = /line (\d+)/.exec(message)?.[1];
  const reason = message.split('\n').at(-1)?.replace(/^Expecting .*, got /, 'unexpected ') ?? message;
  return { field, line: line === undefined ? undefined : Number(line), detail: `not valid Handlebars: ${reason.slice(0, 200)}` };
}

/** Every problem of a template's source, per field; empty when it compiles within the subset. */
export function checkTemplate(content: TemplateContent): SourceProblem[] {
  const problems: SourceProblem[] = [];
  for (const field of TEMPLATE_FIELDS) {
    const source = content[field];
    if (source === undefined) continue;
    let ast: Node;
    try {
      ast = engine.parse(source) as unknown as Node;
    } catch (error) {
      problems.push(parseProblem(field, error));
      continue;
    }
    const walker = new SubsetWalker(field);
    walker.walk(ast);
    problems.push(...walker.problems);
  }
  return problems;
}

type Compiled = Partial<Record<TemplateField, HandlebarsTemplateDelegate>>;

/** Compiles a checked template (call `checkTemplate` first: only the subset is safe). */
export function compileTemplate(content: TemplateContent): Compiled {
  const compiled: Compiled = {};
  for (const field of TEMPLATE_FIELDS) {
    const source = content[field];
    if (source === undefined) continue;
    compiled[field] = engine.compile(source, { ...COMPILE_OPTIONS, noEscape: field !== 'HtmlContent' });
  }
  return compiled;
}

/** Missing variables are reported up to this many per message; a template rarely lacks more. */
const MAX_MISSING = 20;

/**
 * Renders each field with the message's variables. Every missing variable is found (up to
 * `MAX_MISSING`) by rendering again with the ones found so far read as empty.
 */
export function renderTemplate(compiled: Compiled, variables: Readonly<Record<string, unknown>>): { readonly rendered: Rendered; readonly problems: RenderProblem[] } {
  const tracking: Tracking = { steps: 0, failedCheck: undefined, readMiss: undefined, scalar: undefined, filled: new Set(), printed: [], nonce: randomBytes(12).toString('base64url') };
  const problems: RenderProblem[] = [];
  const rendered: Rendered = {};
  for (const field of TEMPLATE_FIELDS) {
    const template = compiled[field];
    if (!template) continue;
    for (;;) {
      [tracking.failedCheck, tracking.readMiss, tracking.scalar] = [undefined, undefined, undefined];
      try {
        const text = template(watch(variables, '', tracking), { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false });
        const printed = printedNotScalar(text, tracking);
        if (!printed) rendered[field] = text;
        // Once per variable, though Subject and TextContent may both print it.
        else if (!problems.some((problem) => problem.kind === 'notScalar' && problem.pointer === printed.pointer)) problems.push({ kind: 'notScalar', ...printed });
        break;
      } catch (error) {
        if (error instanceof RenderBudgetExceeded) {
          problems.push({ kind: 'field', field, detail: `rendering takes more than ${TEMPLATE_LIMITS.renderSteps} steps (nested {{#each}} over long lists?)` });
          return { rendered, problems };
        }
        // Set by the proxy during the call (control flow cannot see that).
        const { failedCheck, readMiss, scalar } = tracking as Tracking;
        // A lookup of a missing name is what strict mode throws right after the proxy saw it fail
        // (building its message can itself throw, on an object without a prototype); a name looked
        // up in a scalar right after reading it is the other thing.
        const missing = failedCheck ?? readMiss;
        if (missing === undefined && scalar !== undefined && isLookupIn(scalar, error)) {
          problems.push({ kind: 'notObject', pointer: scalar.pointer, is: scalar.is });
          break;
        }
        if (missing === undefined) {
          problems.push({ kind: 'field', field, detail: `could not be rendered: ${((error as Error).message ?? '').split('\n')[0]?.slice(0, 200)}` });
          break;
        }
        if (!tracking.filled.has(missing)) problems.push({ kind: 'missing', pointer: missing });
        tracking.filled.add(missing);
        if (problems.length >= MAX_MISSING) return { rendered, problems };
      }
    }
  }
  return { rendered, problems };
}
