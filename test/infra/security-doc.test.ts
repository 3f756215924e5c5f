/**
 * docs/security.md against the synthesised template. The page says each role has exactly the
 * statements it lists; this holds it to that, both ways:
 *
 * - every IAM role and managed policy has a `### … (`ConstructId`)` section, and each of its
 *   statements one row there: the row names the statement's `Sid` in backticks (a statement CDK
 *   adds, which has none, names none), and its Actions column lists exactly the statement's
 *   actions, each in full and in backticks (`dynamodb:GetItem`, never `GetItem`);
 * - the row states the statement's partitions (`KEY#*`), attributes, other condition values,
 *   and resources, and names no partition the statement lacks;
 * - every action the trust and resource policies grant (or deny) is in their section;
 * - the cdk-nag table has a row for each acknowledgement infra/aws/nag.ts makes, and no other,
 *   and the counts the page states are the counts made, with the default settings and each
 *   variant it names.
 *
 * docs/reputation.md's IAM table repeats the tenant administration policy: its Sids and actions
 * are checked there too.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { CfnResource } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import { acknowledgements, buildStack, sameGroup, synthesised } from './support';

type Json = Record<string, any>;

const read = (page: string) => readFileSync(new URL(`../../docs/${page}`, import.meta.url), 'utf8');

const asArray = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** The text of a page from a heading (`## IAM`) up to the next heading of that level or above. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start < 0) throw new Error(`no "${heading}" heading`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** The `### ` subsections of a section, by heading. */
function subsections(markdown: string): { heading: string; body: string }[] {
  return markdown
    .split(/^(?=### )/m)
    .filter((part) => part.startsWith('### '))
    .map((part) => ({ heading: part.slice(0, part.indexOf('\n')).trim(), body: part }));
}

/** A table row's cells: split at `|` outside code spans. */
function cells(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  let inCode = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '`') inCode = !inCode;
    if (c === '|' && !inCode && line[i - 1] !== '\\') {
      out.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  out.push(cell.trim());
  return out.slice(1, -1);
}

/** Every table row of some Markdown, as its header's column names to cell text. */
function tableRows(markdown: string): Record<string, string>[] {
  const rows: Record<string, string>[] = [];
  let header: string[] | undefined;
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) {
      header = undefined;
      continue;
    }
    const row = cells(line);
    if (!header) header = row;
    else if (!row.every((cell) => /^:?-+:?$/.test(cell))) rows.push(Object.fromEntries(header.map((name, i) => [name, row[i] ?? ''])));
  }
  return rows;
}

/** The code spans of some text. */
const spans = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

const SID = /^[A-Z][A-Za-z0-9]*$/;
const PARTITION = /^[A-Z]+#([a-z]+#)?\*$/;

/** Each CloudFormation logical id of the stack's resources, to the id of the construct it belongs to. */
function constructIds(stack: Stack): Map<string, string> {
  const names = new Map<string, string>();
  for (const construct of stack.node.findAll()) {
    if (!CfnResource.isCfnResource(construct)) continue;
    const owner = construct.node.id === 'Resource' ? construct.node.scope!.node.id : construct.node.id;
    names.set(stack.resolve(construct.logicalId), owner);
  }
  return names;
}

/** What the doc says for a resource the template names by its construct. */
function phraseFor(construct: string): string | undefined {
  if (construct === 'Table') return 'the table';
  if (/FunctionLogs$/.test(construct)) return 'its own log group';
  if (/ConfigurationSet$/.test(construct)) return 'configuration sets';
  return {
    SesEventsQueue: 'the SES events queue',
    WebhookQueue: 'the webhook queue',
    ScheduleQueue: 'the schedule queue',
    ScheduleQueueDeadLetters: 'dead-letter queue',
    WebhookSecretsKey: "the stack's KMS key",
    SchedulerRole: 'the Scheduler role',
  }[construct];
}

/** The rule a doc row must obey for a resource; a string it must contain, or a code span one of its spans must contain. */
function resourceClaim(resource: unknown, names: Map<string, string>): { phrase: string } | { span: string } {
  if (resource === '*') return { span: '*' };
  const getAtt = (resource as Json)['Fn::GetAtt'];
  if (getAtt) {
    const construct = names.get(getAtt[0]) ?? getAtt[0];
    const phrase = phraseFor(construct);
    if (!phrase) throw new Error(`the test knows no phrase for ${construct}: add one here and use it in docs/security.md`);
    return { phrase };
  }
  const join = (resource as Json)['Fn::Join'];
  if (join) {
    const parts = (join[1] as unknown[]).map((part) => {
      if (typeof part === 'string') return part;
      const ref = (part as Json).Ref as string | undefined;
      if (ref?.startsWith('AWS::')) return `{${ref.slice(5)}}`;
      if (ref) return `{ref ${names.get(ref) ?? ref}}`;
      throw new Error(`unexpected ARN part ${JSON.stringify(part)}`);
    });
    // arn:partition:service:region:account:resource
    const name = parts.join('').split(':').slice(5).join(':');
    const ref = /\{ref ([^}]+)\}/.exec(name);
    if (ref) {
      const phrase = phraseFor(ref[1]!);
      if (!phrase) throw new Error(`the test knows no phrase for ${ref[1]}: add one here and use it in docs/security.md`);
      return { phrase };
    }
    // The schedule group's name is made at synth; the page writes it `<group>`.
    return { span: name.replace(/^schedule\/[^/]+\/\*$/, 'schedule/<group>/*') };
  }
  throw new Error(`unexpected resource ${JSON.stringify(resource)}`);
}

/** What a row must say of a statement's conditions, as readable failures (empty: it says all). */
function conditionGaps(statement: Json, cell: string): string[] {
  const gaps: string[] = [];
  const inCell = new Set(spans(cell));
  const condition = (statement.Condition ?? {}) as Record<string, Record<string, unknown>>;
  const keys = new Set(Object.values(condition).flatMap((byKey) => Object.keys(byKey)));
  for (const [operator, byKey] of Object.entries(condition)) {
    for (const [key, value] of Object.entries(byKey)) {
      if (key === 'dynamodb:Select') {
        if (!/\bprojection\b/i.test(cell)) gaps.push('says "projection" (dynamodb:Select and dynamodb:ReturnValues)');
        continue;
      }
      if (key === 'dynamodb:ReturnValues') {
        if (!keys.has('dynamodb:Select') && !/\breturns nothing\b/i.test(cell)) gaps.push('says "returns nothing" (dynamodb:ReturnValues)');
        continue;
      }
      if (operator === 'Null') {
        if (!inCell.has(key)) gaps.push(`names \`${key}\``);
        continue;
      }
      if (key === 'dynamodb:Attributes' && !/\bonly\b/i.test(cell)) gaps.push('says "only" before the attributes');
      if (key !== 'dynamodb:LeadingKeys' && key !== 'dynamodb:Attributes' && !inCell.has(key)) gaps.push(`names \`${key}\``);
      for (const item of asArray(value)) {
        if (typeof item !== 'string') continue;
        if (!inCell.has(item)) gaps.push(`names \`${item}\` (${key})`);
      }
    }
  }
  const leadingKeys = new Set(Object.values(condition).flatMap((byKey) => asArray(byKey['dynamodb:LeadingKeys'] as string[] | undefined)));
  for (const span of inCell) if (PARTITION.test(span) && !leadingKeys.has(span)) gaps.push(`names \`${span}\`, which the statement does not allow`);
  if (/\bprojection\b/i.test(cell) && !keys.has('dynamodb:Select')) gaps.push('says "projection", but the statement has no dynamodb:Select');
  if (/\breturns nothing\b/i.test(cell) && !keys.has('dynamodb:ReturnValues')) gaps.push('says "returns nothing", but the statement has no dynamodb:ReturnValues');
  return gaps;
}

interface Principal {
  /** The construct id, as the page's heading names it. */
  readonly name: string;
  readonly statements: Json[];
}

/** Every role and managed policy of the template, with the statements of every policy attached to it. */
function principals(resources: Record<string, Json>, names: Map<string, string>): Principal[] {
  const found: Principal[] = [];
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::IAM::Role') {
      const statements = [
        ...asArray<Json>(resource.Properties.Policies).flatMap((inline) => asArray<Json>(inline.PolicyDocument.Statement)),
        ...Object.values(resources)
          .filter((policy) => policy.Type === 'AWS::IAM::Policy' && asArray<Json>(policy.Properties.Roles).some((role) => role.Ref === id))
          .flatMap((policy) => asArray<Json>(policy.Properties.PolicyDocument.Statement)),
      ];
      found.push({ name: names.get(id)!, statements });
    }
    if (resource.Type === 'AWS::IAM::ManagedPolicy') found.push({ name: names.get(id)!, statements: asArray<Json>(resource.Properties.PolicyDocument.Statement) });
  }
  return found;
}

/** The statements of every other policy in the template: trust policies, queue and key policies, Lambda permissions. */
function resourcePolicyStatements(resources: Record<string, Json>): Json[] {
  const statements: Json[] = [];
  for (const resource of Object.values(resources)) {
    const properties = resource.Properties ?? {};
    if (resource.Type === 'AWS::IAM::Policy' || resource.Type === 'AWS::IAM::ManagedPolicy') continue;
    if (resource.Type === 'AWS::Lambda::Permission') statements.push({ Effect: 'Allow', Action: properties.Action, Principal: { Service: properties.Principal } });
    for (const document of [properties.AssumeRolePolicyDocument, properties.PolicyDocument, properties.KeyPolicy]) {
      if (document) statements.push(...asArray<Json>(document.Statement));
    }
  }
  return statements;
}

const sortedActions = (statement: Json) => asArray<string>(statement.Action).slice().sort();

describe('docs/security.md: IAM', () => {
  const doc = section(read('security.md'), '## IAM and security');
  const sections = subsections(doc);
  let resources: Record<string, Json>;
  let names: Map<string, string>;
  let all: Principal[];

  beforeAll(() => {
    const { stack, resources: synthesisedResources } = synthesised();
    resources = synthesisedResources;
    names = constructIds(stack);
    all = principals(resources, names);
  });

  /** The section whose heading names this construct in backticks. */
  const sectionOf = (name: string) => sections.filter(({ heading }) => spans(heading).includes(name));

  it('has a section for each role and managed policy, and none for one the template lacks', () => {
    const documented = sections.flatMap(({ heading }) => spans(heading).filter((span) => SID.test(span)));
    expect(documented.slice().sort()).toEqual(all.map(({ name }) => name).sort());
  });

  it('attaches no AWS managed policy to any role', () => {
    const attached = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::IAM::Role' && r.Properties.ManagedPolicyArns);
    expect(attached.map(([id]) => id)).toEqual([]);
  });

  it('gives each statement of each role one row, with its Sid and exactly its actions, and no other row', () => {
    const problems: string[] = [];
    for (const { name, statements } of all) {
      const [found] = sectionOf(name);
      if (!found) continue; // the test above names it
      const rows = tableRows(found.body).filter((row) => 'Statement' in row && 'Actions' in row);
      const used = new Set<Record<string, string>>();
      for (const statement of statements) {
        const actions = sortedActions(statement);
        const label = `${name}: ${statement.Sid ?? `statement without Sid (${actions.join(', ')})`}`;
        const matches = rows.filter((row) => {
          const sids = spans(row.Statement!).filter((span) => SID.test(span));
          if (statement.Sid) return sids.includes(statement.Sid);
          return sids.length === 0 && JSON.stringify(spans(row.Actions!).slice().sort()) === JSON.stringify(actions);
        });
        if (matches.length !== 1) {
          problems.push(`${label}: ${matches.length} rows name it (want 1)`);
          continue;
        }
        const row = matches[0]!;
        used.add(row);
        const listed = spans(row.Actions!).slice().sort();
        if (JSON.stringify(listed) !== JSON.stringify(actions)) problems.push(`${label}: the row lists ${listed.join(', ') || 'no action'}, the template ${actions.join(', ')}`);
      }
      for (const row of rows) if (!used.has(row)) problems.push(`${name}: the row "${row.Statement}" (${row.Actions}) matches no statement of the template`);
    }
    expect(problems).toEqual([]);
  });

  it("states each statement's resources, partitions, attributes and other conditions in its row", () => {
    const problems: string[] = [];
    for (const { name, statements } of all) {
      const [found] = sectionOf(name);
      if (!found) continue;
      const rows = tableRows(found.body);
      for (const statement of statements) {
        const actions = sortedActions(statement);
        const row = rows.find((r) => {
          const sids = spans(r.Statement ?? '').filter((span) => SID.test(span));
          return statement.Sid ? sids.includes(statement.Sid) : sids.length === 0 && JSON.stringify(spans(r.Actions ?? '').slice().sort()) === JSON.stringify(actions);
        });
        if (!row) continue; // the test above names it
        const label = `${name}: ${statement.Sid ?? actions.join(', ')}`;
        const cell = row['Resource and conditions'] ?? '';
        for (const resource of asArray(statement.Resource)) {
          const claim = resourceClaim(resource, names);
          if ('phrase' in claim && !cell.includes(claim.phrase)) problems.push(`${label}: the row does not say "${claim.phrase}"`);
          if ('span' in claim && !spans(cell).some((span) => span === claim.span || (claim.span !== '*' && span.includes(claim.span)))) {
            problems.push(`${label}: the row does not name \`${claim.span}\``);
          }
        }
        for (const gap of conditionGaps(statement, cell)) problems.push(`${label}: the row ${gap}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('names every principal and action of the trust and resource policies', () => {
    const [found] = sections.filter(({ heading }) => /resource policies/i.test(heading));
    expect(found).toBeDefined();
    const named = new Set(spans(found!.body));
    const missing = new Set<string>();
    for (const statement of resourcePolicyStatements(resources)) {
      for (const action of asArray<string>(statement.Action)) if (!named.has(action)) missing.add(action);
      for (const service of asArray<string>(statement.Principal?.Service)) if (!named.has(service)) missing.add(service);
    }
    expect([...missing]).toEqual([]);
  });
});

describe('docs/reputation.md: the tenant administration policy', () => {
  it('names each of its statements and actions', () => {
    const { stack, resources } = synthesised();
    const names = constructIds(stack);
    const policy = principals(resources, names).find(({ name }) => name === 'TenantAdministrationPolicy');
    expect(policy).toBeDefined();
    const named = new Set(spans(section(read('reputation.md'), '## IAM')));
    const missing = policy!.statements.flatMap((statement) => [statement.Sid as string, ...asArray<string>(statement.Action)]).filter((name) => !named.has(name));
    expect(missing).toEqual([]);
  });
});

/** The acknowledgements recorded on the stack's constructs, as `rule @ construct` the way the page names them. */
function pageAcknowledgements(stack: Stack): string[] {
  return acknowledgements(stack)
    .map(({ id, constructId }) => `${sameGroup(id)} @ ${pageName(constructId)}`)
    .sort();
}

/** A route's construct id (`POST--v1.2--email--send`) as the page writes it (`POST /v1.2/email/send`); others as they are. */
function pageName(id: string): string {
  if (id === 'DefaultRoute') return '$default';
  const [method, ...path] = id.split('--');
  return path.length > 0 ? `${method} /${path.join('/')}` : id;
}

const NUMBERS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12 };
const number = (text: string) => NUMBERS[text.toLowerCase()] ?? Number(text);

describe('docs/security.md: cdk-nag acknowledgements', () => {
  const doc = section(read('security.md'), '### cdk-nag acknowledgements');
  const prose = doc.replace(/\s+/g, ' ');

  /** Each (rule, resource) pair of the table, as `rule @ resource`. */
  const documented = tableRows(doc)
    .flatMap((row) => {
      const rules = spans(row.Rule ?? '').filter((span) => span.startsWith('AwsSolutions-'));
      return rules.flatMap((rule) => spans(row.Resources ?? '').map((resource) => `${rule} @ ${resource}`));
    })
    .sort();

  /** What the default stack acknowledges, built once for the tests below. */
  let byDefault: string[];
  beforeAll(() => {
    byDefault = pageAcknowledgements(buildStack().stack);
  });

  it('lists exactly what infra/aws/nag.ts acknowledges, one rule and resource a pair', () => {
    expect(documented).toEqual(byDefault);
  });

  it.each([
    ['default settings', /With the default settings there are exactly (\w+)/, {}, 0],
    ['oidcIssuer', /(\w+) fewer with `oidcIssuer`/, { oidcIssuer: 'https://login.example.com/tenant-1', oidcClientId: 'settings-page' }, -1],
    ['tracing off', /(\w+) fewer with `tracing` off/, { tracing: false }, -1],
    ['sesTenants off', /(\w+) fewer with `sesTenants` off/, { sesTenants: false }, -1],
  ] as const)('states how many there are (%s)', (_name, pattern, context, sign) => {
    const match = pattern.exec(prose);
    expect(match).not.toBeNull();
    const made = pageAcknowledgements(buildStack(context).stack).length;
    const stated = sign === 0 ? number(match![1]!) : byDefault.length - number(match![1]!);
    expect(stated).toBe(made);
  });
});
