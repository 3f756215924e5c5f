/**
 * Builds the stack the way `cdk synth` does: the same context as cdk.json (settings and feature
 * flags), plus per-test overrides.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from '@jest/globals';
import { App, Validations } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { EmailSendApiStack } from '../../infra/aws/stack';

interface CdkJson {
  readonly app: string;
  readonly context: Record<string, unknown>;
}

export const CDK_JSON: CdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));

export interface BuildOptions {
  /** Run esbuild for the function asset (about a second); otherwise CDK stages a placeholder. */
  readonly bundle?: boolean;
}

/**
 * Where this test file's apps synthesise, removed after its tests. Left to itself, an App with no
 * `outdir` synthesises into a new `cdk.out*` directory of the system's temp folder and never
 * removes it: about fifty of them (tens of MB, assets included) were left behind by every run.
 */
const synthRoot = mkdtempSync(join(tmpdir(), 'email-send-api-synth-'));
let synths = 0;
afterAll(() => rmSync(synthRoot, { recursive: true, force: true }));

export function buildStack(context: Record<string, unknown> = {}, options: BuildOptions = {}) {
  const app = new App({
    outdir: join(synthRoot, String(synths++)),
    context: {
      ...CDK_JSON.context,
      ...context,
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
    },
  });
  const stack = new EmailSendApiStack(app, 'EmailSendApi');
  return { app, stack };
}

type Json = Record<string, any>;

/**
 * The default stack as a template, with the look-ups the role and resource tests share: a
 * construct's logical id (by path under the stack), its ARN, the table's ARN, and the
 * `dynamodb:LeadingKeys` condition of a statement. Call it in `beforeAll`.
 */
export function synthesised() {
  const { stack } = buildStack();
  const template = Template.fromStack(stack);
  const id = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as Parameters<Stack['getLogicalId']>[0]);
  const logicalIdOf = (path: string) => id(stack.node.findChild(path) as never);
  return {
    stack,
    template,
    resources: template.toJSON().Resources as Record<string, Json>,
    id,
    logicalIdOf,
    arnOf: (path: string) => ({ 'Fn::GetAtt': [logicalIdOf(path), 'Arn'] }),
    table: () => ({ 'Fn::GetAtt': [id(stack.table), 'Arn'] }),
  };
}

/** The `dynamodb:LeadingKeys` condition a statement limited to these partitions carries. */
export const partitions = (...prefixes: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': prefixes } });

/**
 * The statement every function that authenticates API keys carries (audit round 2, finding 1):
 * whether a key's user still holds it and what the key may do, and nothing else of a user. Spelled out here, not imported
 * from infra/, because it is what the tests check.
 */
export function readKeyHoldersStatement(table: unknown) {
  return {
    Sid: 'ReadKeyHolders',
    Effect: 'Allow',
    Action: 'dynamodb:BatchGetItem',
    Resource: table,
    Condition: {
      ...partitions('USER#*'),
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'keyHash', 'keyScopes', 'keySenders', 'keyExpiresAt'] },
      StringEqualsIfExists: { 'dynamodb:Select': ['SPECIFIC_ATTRIBUTES'], 'dynamodb:ReturnValues': ['NONE'] },
    },
  };
}

/**
 * The statement beside it: the hour of a key's last use, written on the key item, and no other
 * attribute of it (so it can never point a key at another user).
 */
export function recordKeyUseStatement(table: unknown) {
  return {
    Sid: 'RecordKeyUse',
    Effect: 'Allow',
    Action: 'dynamodb:UpdateItem',
    Resource: table,
    Condition: {
      ...partitions('KEY#*'),
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'sk', 'lastUsedAt'] },
      StringEqualsIfExists: { 'dynamodb:Select': ['SPECIFIC_ATTRIBUTES'], 'dynamodb:ReturnValues': ['NONE'] },
    },
  };
}

/** An ARN in the stack's own partition, region and account, as CDK's `formatArn` writes it. */
export const sesArn = (suffix: unknown[], account: unknown = { Ref: 'AWS::AccountId' }) => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ses:', { Ref: 'AWS::Region' }, ':', account, ...suffix]],
});

/**
 * The four configuration sets' ARNs (the base and its three tracked siblings) as a statement
 * lists them: CDK sorts a statement's resources, so these come sorted the same way.
 */
export function configurationSetArns(stack: EmailSendApiStack): Json[] {
  const id = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as Parameters<Stack['getLogicalId']>[0]);
  return [stack.configurationSet, ...stack.trackedConfigurationSets.map(({ set }) => set)]
    .map((set) => sesArn([':configuration-set/', { Ref: id(set) }]))
    .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}

/** A cdk-nag acknowledgement recorded on a construct: its path and id, the rule, the reason. */
export interface Acknowledgement {
  readonly path: string;
  readonly constructId: string;
  readonly id: string;
  readonly reason: string;
}

/** The acknowledgements recorded on the stack's constructs, as cdk-nag reads them. */
export function acknowledgements(stack: Stack): Acknowledgement[] {
  const found: Acknowledgement[] = [];
  for (const construct of stack.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) {
        found.push({ path: construct.node.path, constructId: construct.node.id, id: id.replace(/^annotation::/i, ''), reason });
      }
    }
  }
  return found;
}

/** The schedule group's name is generated at synth (`<stack>-ScheduleGroup-<hash>`); the lists name it `<ScheduleGroup>`. */
export const sameGroup = (finding: string): string => finding.replace(/:schedule\/[A-Za-z0-9_.-]+\/\*\]/, ':schedule/<ScheduleGroup>/*]');
