/**
 * Amazon SES's mailbox simulator, played by the local stack (CONTRACT section 10): for every
 * message the SES emulator accepts, the events SES would publish (functions/shared/delivery/
 * mailbox-simulator.ts has the rules), handed to the events queue at the delays SES would take,
 * and the out-of-office auto-reply stored in the emulator. It only sees what goes through the
 * local stack's own emulator: with an external SES_ENDPOINT it is off.
 */
import { bareAddress, simulatedEvents, simulatedOutcome } from '../../functions/shared/delivery/mailbox-simulator';
import type { SimulatedSend } from '../../functions/shared/delivery/mailbox-simulator';
import { subjectOf } from './mail-viewer';

export { simulatedOutcome } from '../../functions/shared/delivery/mailbox-simulator';

export interface SimulatorOptions {
  readonly region: string;
  /** Hands an EventBridge event to the events function's queue. */
  readonly publish: (event: Record<string, unknown>) => void;
  /** Sends the out-of-office auto-reply straight to the emulator (not through the front: it has no events). */
  readonly autoReply?: (reply: { from: string; to: string; subject: string }) => void;
}

type Json = Record<string, any>;

/** An accepted SendEmail request (parsed) as the simulator and the tracking endpoint describe it in SES's events. */
export function simulatedSendOf(request: Json, messageId: string, region: string, sentAt: number): SimulatedSend {
  const destination = request.Destination ?? {};
  return {
    messageId,
    from: String(request.FromEmailAddress ?? ''),
    to: destination.ToAddresses ?? [],
    cc: destination.CcAddresses ?? [],
    bcc: destination.BccAddresses ?? [],
    subject: subjectOf(request),
    tags: Array.isArray(request.EmailTags) ? request.EmailTags : [],
    configurationSet: request.ConfigurationSetName === undefined ? undefined : String(request.ConfigurationSetName),
    region,
    sentAt,
  };
}

/**
 * What the simulator does with one accepted SendEmail: the request body, the emulator's answer and
 * when it was accepted (`sentAt`, the front's one reading of its clock, which the tracking endpoint's
 * events carry too: SES gives every event of a message the same `mail.timestamp`).
 */
export function createMailboxSimulator(options: SimulatorOptions): (request: Buffer, answer: Buffer, sentAt: number) => void {
  return (requestBody, answerBody, sentAt) => {
    let request: Json;
    let messageId: string | undefined;
    try {
      request = JSON.parse(requestBody.toString('utf8')) as Json;
      messageId = (JSON.parse(answerBody.toString('utf8')) as Json).MessageId;
    } catch {
      return;
    }
    if (typeof messageId !== 'string') return;
    const send = simulatedSendOf(request, messageId, options.region, sentAt);
    for (const { delayMs, event } of simulatedEvents(send)) setTimeout(() => options.publish(event), delayMs).unref();
    for (const address of [...send.to, ...send.cc, ...send.bcc].filter((recipient) => simulatedOutcome(recipient) === 'ooto')) {
      options.autoReply?.({ from: address, to: bareAddress(send.from), subject: `Out of the office: ${send.subject}` });
    }
  };
}
