/**
 * The operator's command line (CONTRACT section 8): Organizations, users, memberships, sender
 * identities and keys, against the local stack by default or a deployed table with `--table`.
 * `admin.ts` is its process entry; tests call `runAdmin` directly.
 *
 * Every command prints its human answer (one line, or a list: a count line and a line per entry;
 * `org show`, `user show`, `sender add` and `template show` a few lines), or with `--json` exactly
 * one JSON object, on stdout.
 * Errors go to stderr (as `{"error": {...}}` with `--json`, except usage errors, which are
 * always commander's text) and end with a distinct exit code, see `EXIT_CODES` (command-frame.ts,
 * with the types the command files share; they import that, never this file).
 */
import { Command, CommanderError } from 'commander';
import { resolveAdminContext } from './admin-context';
import type { AdminContext } from './admin-context';
import {
  ExistingRecordError,
  InvalidArgumentError,
  RecordConflictError,
  RecordNotFoundError,
} from './admin-store';
import { networkErrorCode } from '../../functions/shared/runtime/network-errors';
import { EXIT_CODES } from './command-frame';
import type { Action, Leaf } from './command-frame';
import { KeyPolicyError } from '../../functions/shared/domain/key-policy';
import { addKeyCommands } from './key-commands';
import { addLifecycleCommands } from './lifecycle-commands';
import { addScheduleCommands } from './schedule-commands';
import { addTemplateCommands } from './template-commands';
import { TENANT_HELP, addOrgCommands } from './org-commands';
import { TenantError } from './ses-tenants';
import type { Target, TargetOptions } from './target';
import { addFindCommands } from './find-commands';
import { addSenderCommands } from './sender-commands';
import { IdentityError } from './ses-identities';
import { addUserCommands } from './user-commands';
import { UserPoolError } from './user-pool';
import { LOOPBACK, LocalSettingError } from '../local/settings';

interface Output {
  write(text: string): unknown;
}

export interface AdminIo {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly env: Readonly<Record<string, string | undefined>>;
}

interface CommonOptions extends TargetOptions {
  readonly json?: boolean;
}

/** An error the operator can act on, with its exit code, a stable code for `--json` and, for a duplicate, the id of what exists. */
class AdminError extends Error {
  readonly id: string | undefined;

  constructor(
    readonly exitCode: number,
    readonly code: string,
    message: string,
    options?: ErrorOptions & { readonly id?: string },
  ) {
    super(message, options);
    this.name = 'AdminError';
    this.id = options?.id;
  }
}

function toAdminError(error: unknown, target: Target): AdminError {
  if (error instanceof AdminError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof InvalidArgumentError || error instanceof LocalSettingError || error instanceof KeyPolicyError) return new AdminError(EXIT_CODES.invalid, 'invalid_argument', message);
  if (error instanceof RecordNotFoundError) return new AdminError(EXIT_CODES.notFound, 'not_found', message);
  if (error instanceof ExistingRecordError) return new AdminError(EXIT_CODES.conflict, 'conflict', message, { id: error.id });
  if (error instanceof RecordConflictError) return new AdminError(EXIT_CODES.conflict, 'conflict', message);
  if (error instanceof UserPoolError) return new AdminError(EXIT_CODES.unavailable, 'user_pool_unavailable', message, { cause: error });
  if (error instanceof TenantError) return new AdminError(EXIT_CODES.unavailable, 'ses_tenant_unavailable', message, { cause: error });
  if (error instanceof IdentityError) return new AdminError(EXIT_CODES.unavailable, 'ses_identity_unavailable', message, { cause: error });

  const { name = '' } = (error ?? {}) as { name?: string };
  const where = target.local
    ? `the local DynamoDB at ${target.endpoint}`
    : `DynamoDB${target.endpoint ? ` at ${target.endpoint}` : ''}${target.region ? ` in ${target.region}` : ''}`;
  const unavailable = (text: string) => new AdminError(EXIT_CODES.unavailable, 'unavailable', text, { cause: error });
  const connection = networkErrorCode(error);
  if (connection) {
    return unavailable(
      target.local
        ? `cannot reach ${where}: start the local stack with "npm start" (or set DYNAMODB_ENDPOINT / DYNAMODB_PORT), or pass --table NAME for a deployed table`
        : `cannot reach ${where} (${connection})`,
    );
  }
  if (name === 'ResourceNotFoundException') {
    return unavailable(
      `table "${target.tableName}" does not exist in ${where}${target.local ? ' (start the local stack once with "npm start" to create it)' : ''}`,
    );
  }
  if (name === 'CredentialsProviderError') return unavailable('no AWS credentials found: configure the standard AWS credential chain (environment, profile, SSO)');
  if (/region is missing/i.test(message)) return unavailable('no AWS region: pass --region or set AWS_REGION');
  if (name && '$metadata' in (error as object)) return unavailable(`DynamoDB refused the request (${name}): ${message}`);
  return new AdminError(EXIT_CODES.invalid, 'error', `unexpected error: ${message}`, { cause: error });
}

export async function runAdmin(argv: readonly string[], io: Partial<AdminIo> = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const env = io.env ?? process.env;
  const warn = (line: string) => void stderr.write(`${line}\n`);
  // Asked for JSON: a usage error (unknown option, missing option) is one JSON object too, as every
  // other error is, so commander's own lines on stderr are left out.
  // (An operand after "--" is not the option.)
  const beforeOperands = argv.indexOf('--') < 0 ? argv : argv.slice(0, argv.indexOf('--'));
  const wantsJson = beforeOperands.includes('--json');

  // Filled in by the action that runs; the program is built per call because commander keeps state.
  let outcome: { human: string; json: Record<string, unknown>; asJson: boolean } | undefined;
  let failure: { error: unknown; target: Target | undefined; json: boolean } | undefined;

  const program = new Command('npm run --silent admin --')
    .description('Manage Organizations, users, sender identities, API keys, suppression lists and webhooks of the email send API.')
    .option('--json', 'print exactly one JSON object instead of a human line')
    .option('--table <name>', 'use this deployed DynamoDB table (standard AWS credentials) instead of the local stack')
    .option('--region <region>', 'AWS region of --table (default: AWS_REGION or your AWS profile)')
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({ writeOut: (text) => stdout.write(text), writeErr: (text) => (wantsJson ? undefined : stderr.write(text)) })
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addHelpText(
      'after',
      [
        '',
        'Without --table the local stack started by "npm start" is used (DYNAMODB_ENDPOINT, or',
        `http://${LOOPBACK}:DYNAMODB_PORT with table TABLE_NAME, default email-send-api-local).`,
        '',
        `Exit codes: 0 done, ${EXIT_CODES.invalid} usage error or invalid value, ${EXIT_CODES.notFound} not found, ${EXIT_CODES.conflict} conflict,`,
        `${EXIT_CODES.unavailable} DynamoDB, Amazon SES or the user pool unreachable or refused (stack not running, no table, credentials).`,
        '',
        'With a deployed stack, "user create --user-pool-id <UserPoolId output>" (or USER_POOL_ID) also invites',
        'the user to the settings page\'s Cognito user pool.',
        '',
        'Example: npm run --silent admin -- org create --name "Acme" --json',
      ].join('\n'),
    );

  const leaf: Leaf = (parent, name, description, action) =>
    parent
      .command(name)
      .description(description)
      .action(async (_options: unknown, command: Command) => {
        const options = command.optsWithGlobals<CommonOptions & Record<string, string>>();
        let context: AdminContext | undefined;
        try {
          context = resolveAdminContext(options, env, warn);
          const result = await action(context.store(), options, context);
          outcome = { ...result, asJson: options.json === true };
        } catch (error) {
          failure = { error, target: context?.target, json: options.json === true };
        } finally {
          context?.close();
        }
      });

  const org = program.command('org').description('Organizations');
  leaf(org, 'create', 'create an Organization and print its id; with SES tenants, also its tenant', async (store, o, admin) => {
    const tenants = admin.tenants();
    const created = await store.createOrganization({ name: o.name!, ...(o.id !== undefined && { id: o.id }) });
    try {
      await tenants?.ensure(created.id, []);
    } catch (error) {
      throw new TenantError(`Organization "${created.name}" was created with id ${created.id}, but ${(error as Error).message}; finish it with "org tenants sync"`, { cause: error });
    }
    return { human: `Organization "${created.name}" created with id ${created.id}`, json: { id: created.id } };
  })
    .requiredOption('--name <name>', 'display name')
    .option('--id <uuid>', 'use this id instead of a random UUID')
    .addHelpText('after', TENANT_HELP);

  addOrgCommands(org, leaf);
  const user = addUserCommands(program, leaf);
  addFindCommands({ org, user }, leaf);

  const member = program.command('member').description('memberships of users in Organizations');
  const membership = (add: boolean): Action => async (store, o) => {
    const organizationId = o.org!.toLowerCase();
    const userId = o.user!.toLowerCase();
    if (add) await store.addMember(organizationId, userId);
    else await store.removeMember(organizationId, userId);
    return {
      human: `User ${userId} is ${add ? 'now' : 'no longer'} a member of Organization ${organizationId}`,
      json: { organizationId, userId, member: add },
    };
  };
  for (const [name, add] of [['add', true], ['remove', false]] as const) {
    leaf(member, name, `${name} a user ${add ? 'to' : 'from'} an Organization`, membership(add))
      .requiredOption('--org <uuid>', 'Organization id')
      .requiredOption('--user <uuid>', 'user id');
  }

  addSenderCommands(program, leaf);

  addKeyCommands(program, leaf);
  addLifecycleCommands(program, leaf);
  addScheduleCommands(program, leaf);
  addTemplateCommands(program, leaf);

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.exitCode === 0) return EXIT_CODES.ok;
    if (wantsJson) {
      // A command given without its subcommand: commander prints the help, with no message of its own.
      const message = error.code === 'commander.help' ? 'a command is missing' : error.message.replace(/^error: /, '');
      stderr.write(`${JSON.stringify({ error: { code: 'usage', message: `${message} (add --help for usage)` } })}\n`);
    }
    return EXIT_CODES.invalid;
  }

  if (failure) {
    const problem = toAdminError(failure.error, failure.target ?? { tableName: '?', region: undefined, endpoint: undefined, local: true });
    const error = { code: problem.code, message: problem.message };
    stderr.write(failure.json ? `${JSON.stringify({ error, ...(problem.id !== undefined && { id: problem.id }) })}\n` : `error: ${problem.message}\n`);
    return problem.exitCode;
  }
  if (outcome) stdout.write(outcome.asJson ? `${JSON.stringify(outcome.json)}\n` : `${outcome.human}\n`);
  return EXIT_CODES.ok;
}
