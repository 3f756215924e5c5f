/**
 * SES event records as the SES developer guide prints them ("Examples of event data that Amazon
 * SES publishes"), with the service's `OrganizationId` message tag added to `mail.tags`, wrapped
 * in the EventBridge envelope the configuration set's EventBridge destination delivers.
 */
export const FIXTURE_ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
export const FIXTURE_MESSAGE_ID = 'EXAMPLE7c191be45-e9aedb9a-02f9-4d12-a87d-dd0099a07f8a-000000';

type Json = Record<string, any>;

export function mail(overrides: Json = {}): Json {
  return {
    timestamp: '2017-08-05T00:40:02.012Z',
    source: 'Sender Name <sender@example.com>',
    sourceArn: 'arn:aws:ses:us-east-1:123456789012:identity/sender@example.com',
    sendingAccountId: '123456789012',
    messageId: FIXTURE_MESSAGE_ID,
    destination: ['recipient@example.com'],
    headersTruncated: false,
    headers: [
      { name: 'From', value: 'Sender Name <sender@example.com>' },
      { name: 'To', value: 'recipient@example.com' },
      { name: 'Subject', value: 'Message sent from Amazon SES' },
      { name: 'MIME-Version', value: '1.0' },
      { name: 'Content-Type', value: 'multipart/alternative; boundary="----=_Part_7307378_1629847660.1516840721503"' },
    ],
    commonHeaders: { from: ['Sender Name <sender@example.com>'], to: ['recipient@example.com'], messageId: FIXTURE_MESSAGE_ID, subject: 'Message sent from Amazon SES' },
    tags: {
      'ses:configuration-set': ['ConfigSet'],
      'ses:source-ip': ['192.0.2.0'],
      'ses:from-domain': ['example.com'],
      'ses:caller-identity': ['ses_user'],
      OrganizationId: [FIXTURE_ORG],
    },
    ...overrides,
  };
}

export const RECORDS: Record<string, Json> = {
  Send: { eventType: 'Send', mail: mail(), send: {} },
  Delivery: {
    eventType: 'Delivery',
    mail: mail(),
    delivery: { timestamp: '2017-08-05T00:40:03.133Z', processingTimeMillis: 1121, recipients: ['recipient@example.com'], smtpResponse: '250 2.6.0 Message received', reportingMTA: 'mta.example.com' },
  },
  Bounce: {
    eventType: 'Bounce',
    bounce: {
      bounceType: 'Permanent',
      bounceSubType: 'General',
      bouncedRecipients: [{ emailAddress: 'recipient@example.com', action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
      timestamp: '2017-08-05T00:41:02.669Z',
      feedbackId: '01000157c44f053b-61b59c11-9236-11e6-8f96-7be8aexample-000000',
      reportingMTA: 'dsn; mta.example.com',
    },
    mail: mail(),
  },
  Complaint: {
    eventType: 'Complaint',
    complaint: {
      complainedRecipients: [{ emailAddress: 'recipient@example.com' }],
      timestamp: '2017-08-05T00:42:02.669Z',
      feedbackId: '01000157c44f053b-61b59c11-9236-11e6-8f96-7be8aexample-000001',
      userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/60.0.3112.90 Safari/537.36',
      complaintFeedbackType: 'abuse',
      arrivalDate: '2017-08-05T00:42:02.669Z',
    },
    mail: mail(),
  },
  Reject: { eventType: 'Reject', mail: mail(), reject: { reason: 'Bad content' } },
  DeliveryDelay: {
    eventType: 'DeliveryDelay',
    mail: mail(),
    deliveryDelay: {
      timestamp: '2017-08-05T00:40:40.095Z',
      delayType: 'TransientCommunicationFailure',
      expirationTime: '2017-08-05T00:55:40.914Z',
      delayedRecipients: [{ emailAddress: 'recipient@example.com', status: '4.4.1', diagnosticCode: 'smtp; 421 4.4.1 Unable to connect to remote host' }],
    },
  },
  'Rendering Failure': {
    eventType: 'Rendering Failure',
    mail: mail({ headers: undefined, commonHeaders: undefined }),
    failure: { errorMessage: "Attribute 'attributeName' is not present in the rendering data.", templateName: 'MyTemplate' },
  },
  Open: {
    eventType: 'Open',
    mail: mail(),
    open: {
      ipAddress: '192.0.2.1',
      timestamp: '2017-08-09T22:00:19.652Z',
      userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 10_3_3 like Mac OS X) AppleWebKit/603.3.8 (KHTML, like Gecko) Mobile/14G60',
    },
  },
  Click: {
    eventType: 'Click',
    mail: mail(),
    click: {
      ipAddress: '192.0.2.1',
      link: 'http://docs.aws.amazon.com/ses/latest/DeveloperGuide/send-email-smtp.html',
      linkTags: { samplekey0: ['samplevalue0'], samplekey1: ['samplevalue1'] },
      timestamp: '2017-08-09T23:51:25.570Z',
      userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/60.0.3112.90 Safari/537.36',
    },
  },
};

/**
 * Spelled out from the SES developer guide rather than taken from the events function's own map:
 * the names EventBridge really uses are the thing under test.
 */
const DETAIL_TYPES: Record<string, string> = {
  Send: 'Email Sent',
  Delivery: 'Email Delivered',
  Bounce: 'Email Bounced',
  Complaint: 'Email Complaint Received',
  Reject: 'Email Rejected',
  DeliveryDelay: 'Email Delivery Delayed',
  'Rendering Failure': 'Email Rendering Failed',
  Open: 'Email Opened',
  Click: 'Email Clicked',
};

/** The record in an EventBridge event, as the events queue receives it. */
export function eventBridge(record: Json, id = 'a1b2c3d4-0000-0000-0000-000000000000'): Json {
  return {
    version: '0',
    id,
    'detail-type': DETAIL_TYPES[record.eventType],
    source: 'aws.ses',
    account: '123456789012',
    time: '2017-08-05T00:41:03Z',
    region: 'us-east-1',
    resources: ['arn:aws:ses:us-east-1:123456789012:configuration-set/ConfigSet'],
    detail: record,
  };
}

/** A record about another message, or with its recipients and times changed. */
export function variant(record: Json, change: (copy: Json) => void): Json {
  const copy = structuredClone(record);
  change(copy);
  return copy;
}
