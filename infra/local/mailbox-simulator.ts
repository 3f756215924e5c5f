/**
 * Amazon SES's mailbox simulator, played by the local stack (CONTRACT section 10): for every
 * message the SES emulator accepts, the events SES would publish (functions/shared/delivery/
 * mailbox-simulator.ts has the rules), handed to the events queue at the delays SES would take,
 * and the out-of-office auto-reply stored in the emulator. It only sees what goes through the
 * local stack's own emulator: with an external SES_ENDPOINT it is off.
 */
import { bareAddress, simulatedEvents, simulatedOutcome } from '../../functions/shared/delivery/mailbox-simulator';
import { subjectOf } from './mail-viewer';

export { simulatedOutcome } from '../../functions/shared/delivery/mailbox-simulator';

export interface SimulatorOptions {
  readonly region: string;
  /** Hands an EventBridge event to the events function's queue. */
  readonly publish: (event: Record<string, unknown>) => void;
  /** Sends the out-of-office auto-reply straight to the emulator (not through the front: it has no events). */
  readonly autoReply?: (reply: { from: string; to: string; subject: string }) => void;
  readonly now?: () => number;
}

type Json = Record<string, any>;

/** What the simulator does with one accepted SendEmail (request body and the emulator's answer). */
export function createMailboxSimulator(options: SimulatorOptions): (request: Buffer, answer: Buffer) => void {
  const now = options.now ?? Date.now;
  return (requestBody, answerBody) => {
    let request: Json;
    let messageId: string | undefined;
    try {
      request = JSON.parse(requestBody.toString('utf8')) as Json;
      messageId = (JSON.parse(answerBody.toString('utf8')) as Json).MessageId;
    } catch {
      return;
    }
    if (typeof messageId !== 'string') return;
    const destination = request.Destination ?? {};
    const from = String(request.FromEmailAddress ?? '');
    const subject = subjectOf(request);
    const events = simulatedEvents({
      messageId,
      from,
      to: destination.ToAddresses ?? [],
      cc: destination.CcAddresses ?? [],
      bcc: destination.BccAddresses ?? [],
      subject,
      tags: Array.isArray(request.EmailTags) ? request.EmailTags : [],
      configurationSet: request.ConfigurationSetName === undefined ? undefined : String(request.ConfigurationSetName),
      region: options.region,
      sentAt: now(),
    });
    for (const { delayMs, event } of events) setTimeout(() => options.publish(event), delayMs).unref();
    const recipients: string[] = [...(destination.ToAddresses ?? []), ...(destination.CcAddresses ?? []), ...(destination.BccAddresses ?? [])];
    for (const address of recipients.filter((recipient) => simulatedOutcome(recipient) === 'ooto')) {
      options.autoReply?.({ from: address, to: bareAddress(from), subject: `Out of the office: ${subject}` });
    }
  };
}
