/**
 * Amazon SES's mailbox simulator, as code: for one accepted message, the events SES would publish
 * through the configuration set's EventBridge destination, in SES's own shapes (the SES developer
 * guide's "Examples of event data that Amazon SES publishes"), each with the delay after the send
 * at which SES would publish it:
 *
 * | recipient                               | events                                      |
 * |-----------------------------------------|---------------------------------------------|
 * | success@simulator.amazonses.com         | Send, Delivery                              |
 * | bounce@simulator.amazonses.com          | Send, Bounce (Permanent/General)            |
 * | ooto@simulator.amazonses.com            | Send, Delivery (and an auto-reply locally)  |
 * | complaint@simulator.amazonses.com       | Send, Delivery, Complaint (abuse)           |
 * | suppressionlist@simulator.amazonses.com | Send, Bounce (Permanent/Suppressed)         |
 * | anyone else                             | Send, Delivery                              |
 *
 * As in SES, `bounce+label@simulator.amazonses.com` behaves like `bounce@…`. Two players use it:
 * the local stack, for every message its SES emulator accepts (infra/local/mailbox-simulator.ts),
 * and test mode, in AWS as locally, for every message of a test key (mail/test-mailer.ts).
 */
import { randomUUID } from 'node:crypto';
import { EVENTBRIDGE_DETAIL_TYPES } from './ses-event';
import type { SesEventType } from './ses-event';

const SIMULATOR_DOMAIN = 'simulator.amazonses.com';
const ACCOUNT = '123456789012';
/** When each kind of event follows the send (ms): quick, and in the order SES would publish them. */
const DELAYS = { Send: 0, Delivery: 100, Bounce: 150, Complaint: 300 } as const;

export type Outcome = 'deliver' | 'bounce' | 'suppressed' | 'complaint' | 'ooto';

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

/** One accepted message, as the simulator needs it. */
export interface SimulatedSend {
  readonly messageId: string;
  /** The From header as sent (possibly `"Name" <address>`). */
  readonly from: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly bcc: readonly string[];
  readonly subject: string;
  readonly tags: readonly { readonly Name?: string | undefined; readonly Value?: string | undefined }[];
  readonly configurationSet?: string | undefined;
  readonly region: string;
  readonly sentAt: number;
}

export interface SimulatedEvent {
  /** Milliseconds after the send at which SES would publish it. */
  readonly delayMs: number;
  readonly type: SesEventType;
  /** The EventBridge event, as the configuration set's destination delivers it to the events queue. */
  readonly event: Record<string, unknown>;
}

type Json = Record<string, any>;

export const bareAddress = (value: string): string => /<([^>]+)>\s*$/.exec(value)?.[1] ?? value;

/** The events SES would publish for this message, in the order it would publish them. */
export function simulatedEvents(send: SimulatedSend): SimulatedEvent[] {
  const { messageId, sentAt, region } = send;
  const recipients = [...send.to, ...send.cc, ...send.bcc];
  const mail = mailObject(send, recipients);
  const events: SimulatedEvent[] = [];
  const publish = (type: SesEventType, delayMs: number, body: Json) =>
    events.push({ delayMs, type, event: envelope(EVENTBRIDGE_DETAIL_TYPES[type], { eventType: type, mail, ...body }, region, send.configurationSet) });
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
  return events;
}

/** What a recipient did with a tracked message, as SES reports it (`open` / `click` of its event record). */
export type Engagement =
  | { readonly type: 'Open'; readonly open: { readonly ipAddress: string; readonly timestamp: string; readonly userAgent: string } }
  | {
      readonly type: 'Click';
      readonly click: { readonly ipAddress: string; readonly timestamp: string; readonly userAgent: string; readonly link: string; readonly linkTags: Record<string, string[]> };
    };

/**
 * The Open or Click event SES publishes when a recipient loads the pixel or follows a link of a
 * message sent through a tracked configuration set (the local SES front's tracking endpoint).
 */
export function engagementEvent(send: SimulatedSend, engagement: Engagement): Record<string, unknown> {
  const mail = mailObject(send, [...send.to, ...send.cc, ...send.bcc]);
  const detail = engagement.type === 'Open' ? { eventType: 'Open', mail, open: engagement.open } : { eventType: 'Click', mail, click: engagement.click };
  return envelope(EVENTBRIDGE_DETAIL_TYPES[engagement.type], detail, send.region, send.configurationSet);
}

function mailObject(send: SimulatedSend, recipients: string[]): Json {
  const { from, subject, messageId, sentAt, region } = send;
  const fromDomain = bareAddress(from).split('@')[1] ?? '';
  const to = [...send.to];
  const tags: Record<string, string[]> = {
    ...(send.configurationSet && { 'ses:configuration-set': [send.configurationSet] }),
    'ses:source-ip': ['127.0.0.1'],
    'ses:from-domain': [fromDomain],
    'ses:caller-identity': ['local'],
  };
  for (const tag of send.tags) if (tag.Name) tags[tag.Name] = [String(tag.Value)];
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

function envelope(detailType: string, detail: Json, region: string, configurationSet: unknown): Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': detailType,
    source: 'aws.ses',
    account: ACCOUNT,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: configurationSet ? [`arn:aws:ses:${region}:${ACCOUNT}:configuration-set/${String(configurationSet)}`] : [],
    detail,
  };
}
