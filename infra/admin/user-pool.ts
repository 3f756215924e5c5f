/**
 * The settings page's Cognito user pool (stack output UserPoolId), as the admin CLI uses it:
 * `user create` and `user invite` add the person with a verified e-mail address and have Cognito
 * e-mail the invitation; `user delete` removes them. Locally there is no pool: the local OpenID
 * provider signs in any user the CLI created.
 */
import { AdminCreateUserCommand, AdminDeleteUserCommand, CognitoIdentityProviderClient, UserNotFoundException, UsernameExistsException } from '@aws-sdk/client-cognito-identity-provider';
import { InvalidArgumentError } from '../../functions/shared/store/records';

/** The user pool did not take a change; the message says what to do. */
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

function refusal(userPoolId: string, what: string, error: unknown): UserPoolError {
  const { name = 'Error', message = String(error) } = error as { name?: string; message?: string };
  return new UserPoolError(`the user pool ${userPoolId} refused ${what} (${name}: ${message})`, { cause: error });
}

/** One user pool and its client (built for the pool's own region). */
export class UserPool {
  constructor(
    readonly id: string,
    private readonly client: CognitoIdentityProviderClient,
  ) {}

  /**
   * Adds the address to the pool, verified (the service already knows it belongs to the user), and
   * has Cognito e-mail the invitation. A person already in the pool is left as they are.
   */
  async invite(email: string): Promise<Invitation> {
    try {
      await this.client.send(
        new AdminCreateUserCommand({
          UserPoolId: this.id,
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
      if (error instanceof UsernameExistsException) return 'already in the user pool';
      throw refusal(this.id, `the invitation of ${email}`, error);
    }
  }

  /** Removes the person; true when they were in the pool. */
  async remove(email: string): Promise<boolean> {
    try {
      await this.client.send(new AdminDeleteUserCommand({ UserPoolId: this.id, Username: email }));
      return true;
    } catch (error) {
      if (error instanceof UserNotFoundException) return false;
      throw refusal(this.id, `the removal of ${email}`, error);
    }
  }
}
