/**
 * `user create` and `user invite`: a service user (its user and e-mail items), and, when the
 * stack made a Cognito user pool for the settings page (output UserPoolId), the same person in
 * that pool with a verified e-mail address, invited by e-mail with a temporary password. Apart
 * from cli.ts, which runs the command line (output, errors); what both share (targets, the
 * action and leaf types, exit codes) is in command-frame.ts.
 *
 * Locally there is no pool: the local OpenID provider signs in any user this command created.
 */
import { AdminCreateUserCommand, CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import type { Command } from 'commander';
import { InvalidArgumentError } from '../../functions/shared/store/records';
import type { Leaf } from './command-frame';

/** The user pool did not take an invitation; the message says what to do. */
export class UserPoolError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UserPoolError';
  }
}

/** A pool id is `<region>_<id>`; the region it names is the one to call. */
const POOL_ID = /^([a-z]{2}(?:-[a-z]+)+-\d)_[0-9A-Za-z]+$/;

export function userPoolRegion(userPoolId: string): string {
  const match = POOL_ID.exec(userPoolId);
  if (!match) throw new InvalidArgumentError(`"${userPoolId}" is not a Cognito user pool id (like eu-west-1_AbCdEf123; the stack output UserPoolId)`);
  return match[1]!;
}

export type Invitation = 'invited' | 'already in the user pool';

/**
 * Adds the address to the pool, verified (the service already knows it belongs to the user), and
 * has Cognito e-mail the invitation. A person already in the pool is left as they are.
 */
export async function inviteToUserPool(userPoolId: string, email: string): Promise<Invitation> {
  const client = new CognitoIdentityProviderClient({ region: userPoolRegion(userPoolId), maxAttempts: 3 });
  try {
    await client.send(
      new AdminCreateUserCommand({
        UserPoolId: userPoolId,
        Username: email,
        UserAttributes: [
          { Name: 'email', Value: email },
          { Name: 'email_verified', Value: 'true' },
        ],
        DesiredDeliveryMediums: ['EMAIL'],
      }),
    );
    return 'invited';
  } catch (error) {
    if ((error as { name?: string }).name === 'UsernameExistsException') return 'already in the user pool';
    const { name = 'Error', message = String(error) } = error as { name?: string; message?: string };
    throw new UserPoolError(`the user pool ${userPoolId} refused the invitation of ${email} (${name}: ${message})`, { cause: error });
  } finally {
    client.destroy();
  }
}

export function addUserCommands(program: Command, leaf: Leaf, env: Readonly<Record<string, string | undefined>>): void {
  const poolOf = (o: Record<string, string>) => o.userPoolId ?? (env.USER_POOL_ID?.trim() || undefined);
  const user = program.command('user').description('users (API callers)');

  leaf(user, 'create', 'create a user and print its id; with a user pool, also invite them to the settings page', async (store, o) => {
    const userPoolId = poolOf(o);
    if (userPoolId !== undefined) userPoolRegion(userPoolId);
    const created = await store.createUser({ email: o.email! });
    if (userPoolId === undefined) return { human: `User ${created.email} created with id ${created.id}`, json: { id: created.id } };
    try {
      const invitation = await inviteToUserPool(userPoolId, created.email);
      return {
        human: `User ${created.email} created with id ${created.id}, ${invitation === 'invited' ? 'and invited by e-mail to the settings page' : 'already in the user pool'}`,
        json: { id: created.id, userPool: invitation === 'invited' ? 'invited' : 'existing' },
      };
    } catch (error) {
      // The service user exists now: say so, and how to finish, rather than leave a half-done state unexplained.
      throw new UserPoolError(`user ${created.email} was created with id ${created.id}, but ${(error as Error).message}; retry the invitation with "user invite --user ${created.id}"`, { cause: error });
    }
  })
    .requiredOption('--email <email>', "the user's email address (unique)")
    .option('--user-pool-id <id>', 'also invite the user to this Cognito user pool (stack output UserPoolId; default USER_POOL_ID)');

  leaf(user, 'invite', "invite an existing user to the settings page's Cognito user pool (verified e-mail, temporary password by e-mail)", async (store, o) => {
    const userPoolId = poolOf(o);
    if (userPoolId === undefined) throw new InvalidArgumentError('--user-pool-id (stack output UserPoolId) or USER_POOL_ID is required');
    userPoolRegion(userPoolId);
    const found = await store.getUser(o.user!);
    const invitation = await inviteToUserPool(userPoolId, found.email);
    return {
      human: invitation === 'invited' ? `User ${found.email} invited by e-mail to the settings page` : `User ${found.email} is already in the user pool`,
      json: { id: found.id, userPool: invitation === 'invited' ? 'invited' : 'existing' },
    };
  })
    .requiredOption('--user <uuid>', 'user id')
    .option('--user-pool-id <id>', 'the Cognito user pool (stack output UserPoolId; default USER_POOL_ID)');
}
