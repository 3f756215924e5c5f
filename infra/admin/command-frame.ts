/**
 * What the admin CLI's frame (cli.ts) and its command files share: the shape of a command's
 * action (it gets the table's store and the admin context, admin-context.ts: the target and its
 * clients, resolved once), the function that declares one, and the exit codes.
 * It lives apart from cli.ts so that command files import it rather than cli.ts, which imports
 * them: the import graph stays a tree (test/unit/imports.test.ts checks that).
 */
import type { Command } from 'commander';
import type { AdminContext } from './admin-context';
import type { DynamoDbAdminStore } from './admin-store';

export type { Target } from './target';

export const EXIT_CODES = {
  ok: 0,
  /** Bad usage (unknown command, missing option) or an invalid value (UUID, address, domain). */
  invalid: 1,
  /** The user, Organization, membership, sender identity or key does not exist. */
  notFound: 3,
  /** A duplicate: the user already has a key, the id or email is taken, or a concurrent change won. */
  conflict: 4,
  /** DynamoDB (or the Cognito user pool) cannot be reached or used: stack not running, no table, no credentials or permission. */
  unavailable: 5,
} as const;

export type Action = (store: DynamoDbAdminStore, options: Record<string, string>, admin: AdminContext) => Promise<{ human: string; json: Record<string, unknown> }>;
export type Leaf = (parent: Command, name: string, description: string, action: Action) => Command;
