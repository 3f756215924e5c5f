/**
 * A send Amazon SES refuses because it paused the Organization's tenant pauses the Organization
 * (CONTRACT section 11 item 4), so that its next request gets 403 `organization-paused` from the
 * service itself instead of trying SES again message by message. A decorator of the mailer: the
 * message's own result stays what SES said (`SendingPaused`), and a send that succeeds costs
 * nothing more.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Mailer } from '../shared/mail/ports';
import { SendFailure } from '../shared/mail/ports';
import { refusedForPausedTenant } from '../shared/mail/tenants';

export function pausingOnTenantRefusal(mailer: Mailer, pause: (organizationId: string) => Promise<unknown>, logger: Pick<Logger, 'warn'>): Mailer {
  return {
    async send(email, signal) {
      try {
        return await mailer.send(email, signal);
      } catch (error) {
        if (error instanceof SendFailure && refusedForPausedTenant(error.cause)) {
          // The message's result is known either way; a failed pause must not change it. SES keeps
          // refusing the tenant, so the next refused send tries the pause again.
          await pause(email.organizationId).catch((failure: unknown) => {
            logger.warn('could not pause an Organization whose tenant SES refused', { organizationId: email.organizationId, error: failure as Error });
          });
        }
        throw error;
      }
    },
  };
}
