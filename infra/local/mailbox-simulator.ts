/**
 * Amazon SES's mailbox simulator, played by the local stack (CONTRACT section 10): for every
 * message the SES emulator accepts, the events SES would publish through the configuration set's
 * EventBridge destination, in SES's own shapes (the SES developer guide's "Examples of event data
 * that Amazon SES publishes"), within a fraction of a second:
 *
 * | recipient                               | events                                      |
 * |-----------------------------------------|---------------------------------------------|
 * | success@simulator.amazonses.com         | Send, Delivery                              |
 * | bounce@simulator.amazonses.com          | Send, Bounce (Permanent/General)            |
 * | ooto@simulator.amazonses.com            | Send, Delivery; an auto-reply to the sender |
 * | complaint@simulator.amazonses.com       | Send, Delivery, Complaint (abuse)           |
 * | suppressionlist@simulator.amazonses.com | Send, Bounce (Permanent/Suppressed)         |
 * | anyone else                             | Send, Delivery                              |
 *
 * As in SES, `bounce+label@simulator.amazonses.com` behaves like `bounce@…`. It only sees what
 * goes through the local stack's own emulator: with an external SES_ENDPOINT it is off.
 */
import { randomUUID } from 'node:crypto';
import { EVENTBRIDGE_DETAIL_TYPES } from '../../functions/shared/delivery/ses-event';
import type { SesEventType } from '../../functions/shared/delivery/ses-event';
import { subjectOf } from './mail-viewer';

const SIMULATOR_DOMAIN = 'simulator.amazonses.com';
const ACCOUNT = '123456789012';
/** When each kind of event follows the send (ms): quick, and in the order SES would publish them. */
const DELAYS = { Send: 0, Delivery: 100, Bounce: 150, Complaint: 300 } as const;

type Outcome = 'deliver' | 'bounce' | 'suppressed' | 'complaint' | 'ooto';

export function simulatedOutcome(address: string): Outcome {
  const [local = '', domain = ''] = address.toLowerCase().split('@');
  if (domain !== SIMULATOR_DOMAIN) return 'deliver';
  const box = local.split('+')[0];
  if (box === 'bounce') return 'bounce';
  if (box === 'suppressionlist') return 'suppressed';
  if (box === 'complaint') return 'complaint';
  if (box === 'ooto') return 'ooto';
  return 'deliver';
}

export interface SimulatorOptions {
  readonly region: string;
  /** Hands an EventBridge event to the events function's queue. */
  readonly publish: (event: Record<string, unknown>) => void;
  /** Sends the out-of-office auto-reply straight to the emulator (not through the front: it has no events). */
  readonly autoReply?: (reply: { from: string; to: string; subject: string }) => void;
  readonly now?: () => number;
}

type Json = Record<string, any>;

const bareAddress = (value: string): string => /<([^>]+)>\s*$/.exec(value)?.[1] ?? value;

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
    const recipients: string[] = [...(destination.ToAddresses ?? []), ...(destination.CcAddresses ?? []), ...(destination.BccAddresses ?? [])];
    const sentAt = now();
    const mail = mailObject(request, messageId, recipients, sentAt, options.region);
    const publish = (type: SesEventType, delay: number, body: Json) =>
      setTimeout(() => options.publish(envelope(type, { eventType: type, mail, ...body }, options.region, request.ConfigurationSetName)), delay).unref();
    const at = (delay: number) => new Date(sentAt + delay).toISOString();
    const by = (wanted: Outcome[]) => recipients.filter((address) => wanted.includes(simulatedOutcome(address)));

    publish('Send', DELAYS.Send, { send: {} });
    const delivered = by(['deliver', 'complaint', 'ooto']);
    if (delivered.length > 0) {
      publish('Delivery', DELAYS.Delivery, {
        delivery: { timestamp: at(DELAYS.Delivery), processingTimeMillis: DELAYS.Delivery, recipients: delivered, smtpResponse: '250 2.6.0 Message received', reportingMTA: 'a8-1.smtp-out.amazonses.com' },
      });
    }
    for (const [outcome, subType, diagnostic] of [
      ['bounce', 'General', 'smtp; 550 5.1.1 user unknown'],
      ['suppressed', 'Suppressed', 'Amazon SES has suppressed sending to this address because it has a recent history of bouncing as an invalid address.'],
    ] as const) {
      const bounced = by([outcome]);
      if (bounced.length === 0) continue;
      publish('Bounce', DELAYS.Bounce, {
        bounce: {
          bounceType: 'Permanent',
          bounceSubType: subType,
          bouncedRecipients: bounced.map((emailAddress) => ({ emailAddress, action: 'failed', status: '5.1.1', diagnosticCode: diagnostic })),
          timestamp: at(DELAYS.Bounce),
          feedbackId: `${messageId}-${subType.toLowerCase()}`,
          reportingMTA: 'dsn; a8-1.smtp-out.amazonses.com',
        },
      });
    }
    const complained = by(['complaint']);
    if (complained.length > 0) {
      publish('Complaint', DELAYS.Complaint, {
        complaint: {
          complainedRecipients: complained.map((emailAddress) => ({ emailAddress })),
          timestamp: at(DELAYS.Complaint),
          feedbackId: `${messageId}-complaint`,
          userAgent: 'Amazon SES Mailbox Simulator',
          complaintFeedbackType: 'abuse',
          arrivalDate: at(DELAYS.Complaint),
        },
      });
    }
    for (const address of by(['ooto'])) {
      options.autoReply?.({ from: address, to: bareAddress(String(request.FromEmailAddress ?? '')), subject: `Out of the office: ${mail.commonHeaders.subject}` });
    }
  };
}

function mailObject(request: Json, messageId: string, recipients: string[], sentAt: number, region: string): Json {
  const from = String(request.FromEmailAddress ?? '');
  const fromDomain = bareAddress(from).split('@')[1] ?? '';
  const subject = subjectOf(request);
  const to: string[] = request.Destination?.ToAddresses ?? [];
  const tags: Record<string, string[]> = {
    ...(request.ConfigurationSetName && { 'ses:configuration-set': [String(request.ConfigurationSetName)] }),
    'ses:source-ip': ['127.0.0.1'],
    'ses:from-domain': [fromDomain],
    'ses:caller-identity': ['local'],
  };
  for (const tag of request.EmailTags ?? []) if (tag?.Name) tags[String(tag.Name)] = [String(tag.Value)];
  return {
    timestamp: new Date(sentAt).toISOString(),
    source: from,
    sourceArn: `arn:aws:ses:${region}:${ACCOUNT}:identity/${fromDomain}`,
    sendingAccountId: ACCOUNT,
    messageId,
    destination: recipients,
    headersTruncated: false,
    headers: [
      { name: 'From', value: from },
      { name: 'To', value: to.join(', ') },
      { name: 'Subject', value: subject },
      { name: 'MIME-Version', value: '1.0' },
    ],
    commonHeaders: { from: [from], to, messageId, subject },
    tags,
  };
}

function envelope(type: SesEventType, detail: Json, region: string, configurationSet: unknown): Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': EVENTBRIDGE_DETAIL_TYPES[type],
    source: 'aws.ses',
    account: ACCOUNT,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: configurationSet ? [`arn:aws:ses:${region}:${ACCOUNT}:configuration-set/${String(configurationSet)}`] : [],
    detail,
  };
}
