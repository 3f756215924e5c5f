/**
 * `user create` and `user invite`: a service user (its user and e-mail items), and, when the
 * stack made a Cognito user pool for the settings page (output UserPoolId), the same person in
 * that pool with a verified e-mail address, invited by e-mail with a temporary password
 * (user-pool.ts). Apart from cli.ts, which runs the command line (output, errors); what both
 * share (the action and leaf types, exit codes) is in command-frame.ts.
 *
 * Locally there is no pool: the local OpenID provider signs in any user this command created.
 */
import type { Command } from 'commander';
import { ExistingRecordError, InvalidArgumentError, RecordConflictError } from '../../functions/shared/store/records';
import type { Leaf } from './command-frame';
import { AdminDirectory } from './directory-store';
import { createServiceUser } from './service-users';
import { UserPoolError } from './user-pool';

export function addUserCommands(program: Command, leaf: Leaf): Command {
  const user = program.command('user').description('users (API callers)');

  leaf(user, 'create', 'create a user and print its id; with a user pool, also invite them to the settings page; with --service, a service user', async (store, o, admin) => {
    if (o.service) {
      if (o.email !== undefined || o.userPoolId !== undefined) throw new InvalidArgumentError('a service user has no e-mail and no sign-in: --service takes --name and --org, not --email or --user-pool-id');
      if (o.name === undefined || o.org === undefined) throw new InvalidArgumentError('--service needs --name N and --org O');
      const created = await createServiceUser(store, { name: o.name, organizationId: o.org });
      return { human: `Service user "${created.serviceName}" created with id ${created.id}, member of Organization ${o.org.toLowerCase()}`, json: { id: created.id } };
    }
    if (o.email === undefined) throw new InvalidArgumentError('--email E is required (or --service --name N --org O for a service user)');
    if (o.name !== undefined || o.org !== undefined) throw new InvalidArgumentError('--name and --org are for a service user (--service)');
    const pool = admin.userPool(o.userPoolId);
    const created = await store.createUser({ email: o.email! }).catch(async (error: unknown) => {
      // The address is taken: name the user who has it, so a script can go on with that id.
      const existing = error instanceof RecordConflictError ? await new AdminDirectory(store).user({ email: o.email! }).catch(() => undefined) : undefined;
      throw existing ? new ExistingRecordError(`a user with email ${existing.email} already exists, with id ${existing.id}`, existing.id, { cause: error }) : error;
    });
    if (pool === undefined) return { human: `User ${created.email} created with id ${created.id}`, json: { id: created.id } };
    try {
      const invitation = await pool.invite(created.email);
      return {
        human: `User ${created.email} created with id ${created.id}, ${invitation === 'invited' ? 'and invited by e-mail to the settings page' : 'already in the user pool'}`,
        json: { id: created.id, userPool: invitation === 'invited' ? 'invited' : 'existing' },
      };
    } catch (error) {
      // The service user exists now: say so, and how to finish, rather than leave a half-done state unexplained.
      throw new UserPoolError(`user ${created.email} was created with id ${created.id}, but ${(error as Error).message}; retry the invitation with "user invite --user ${created.id}"`, { cause: error });
    }
  })
    .option('--email <email>', "the user's email address (unique)")
    .option('--user-pool-id <id>', 'also invite the user to this Cognito user pool (stack output UserPoolId; default USER_POOL_ID)')
    .option('--service', 'a service user: no e-mail and no sign-in, member of one Organization, for an integration (docs/keys.md)')
    .option('--name <name>', "the service user's name (with --service)")
    .option('--org <uuid>', 'the Organization the service user belongs to (with --service)');

  leaf(user, 'invite', "invite an existing user to the settings page's Cognito user pool (verified e-mail, temporary password by e-mail)", async (store, o, admin) => {
    const pool = admin.userPool(o.userPoolId);
    if (pool === undefined) throw new InvalidArgumentError('--user-pool-id (stack output UserPoolId) or USER_POOL_ID is required');
    const found = await store.getUser(o.user!);
    if (found.email === undefined) throw new InvalidArgumentError(`user ${found.id} is a service user: it has no e-mail and cannot sign in`);
    const invitation = await pool.invite(found.email);
    return {
      human: invitation === 'invited' ? `User ${found.email} invited by e-mail to the settings page` : `User ${found.email} is already in the user pool`,
      json: { id: found.id, userPool: invitation === 'invited' ? 'invited' : 'existing' },
    };
  })
    .requiredOption('--user <uuid>', 'user id')
    .option('--user-pool-id <id>', 'the Cognito user pool (stack output UserPoolId; default USER_POOL_ID)');
  return user;
}
