/**
 * A message that passed every rule of the send request (functions/send/validation.ts): what the
 * send path sends now, what the schedule store keeps until its time, and what the scheduled-send
 * function sends then. Here, beside the mail ports, because the send, scheduled-send and cancel
 * functions all hold one, and shared code takes nothing from a function's own folder.
 */
import type { EmailAddress } from '../domain/email-address';
import type { TemplateUse } from '../templates/template-rules';
import type { OutgoingEmail } from './ports';
import type { TrackingChoice } from './tracking';

/** A message that passed every rule: its content as it will go out, plus what decides its send. */
export interface ValidMessage extends Omit<OutgoingEmail, 'organizationId' | 'from'> {
  readonly index: number;
  readonly from: EmailAddress;
  /** Epoch milliseconds (UTC). */
  readonly expiresAt?: number;
  /** Epoch milliseconds (UTC) of `SendAt`: when it is still ahead, the message is scheduled (functions/send/send-at.ts). */
  readonly sendAt?: number;
  /** The template it is written from, rendered in after authorisation (functions/send/templated.ts); the subject is empty until then. */
  readonly templateUse?: TemplateUse;
  /**
   * The message's own `Tracking`, as validated: resolved against the Organization's default into
   * `tracking` once the Organization is read (functions/send/tracking.ts), then dropped.
   */
  readonly trackingChoice?: TrackingChoice;
  /** Recipients the Organization's suppression list removed (functions/send/suppression.ts); set after validation. */
  readonly suppressed?: readonly string[];
}
