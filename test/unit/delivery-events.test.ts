import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { RecipientState } from '../../functions/shared/delivery/recipient-state';
import { messageStatus, supersedes } from '../../functions/shared/delivery/recipient-state';
import { EVENTBRIDGE_DETAIL_TYPES, parseEngagementEvent, parseSesEvent } from '../../functions/shared/delivery/ses-event';
import { FIXTURE_MESSAGE_ID, FIXTURE_ORG, RECORDS, eventBridge, mail, variant } from '../support/ses-fixtures';

describe('parseSesEvent (the SES developer guide\'s example records, through EventBridge)', () => {
  it.each([
    ['Send', 'Sent', null, '2017-08-05T00:40:02.012Z', undefined],
    ['Delivery', 'Delivered', null, '2017-08-05T00:40:03.133Z', undefined],
    ['Bounce', 'Bounced', 'Permanent/General', '2017-08-05T00:41:02.669Z', 'Bounce'],
    ['Complaint', 'Complained', 'abuse', '2017-08-05T00:42:02.669Z', 'Complaint'],
    ['Reject', 'Rejected', 'Bad content', '2017-08-05T00:40:02.012Z', undefined],
    ['DeliveryDelay', 'Delayed', 'TransientCommunicationFailure', '2017-08-05T00:40:40.095Z', undefined],
    ['Rendering Failure', 'Rejected', "RenderingFailure: Attribute 'attributeName' is not present in the rendering data.", '2017-08-05T00:40:02.012Z', undefined],
  ])('reads a %s record: recipient %s, detail %s, at its own time, suppression %s', (type, status, detail, at, suppress) => {
    const event = parseSesEvent(eventBridge(RECORDS[type]!));
    expect(event).toMatchObject({ type, messageId: FIXTURE_MESSAGE_ID, organizationId: FIXTURE_ORG, status, at });
    expect(event!.recipients).toEqual([{ address: 'recipient@example.com', status, at, detail, eventId: event!.id }]);
    expect(event!.suppress).toEqual(suppress ? { reason: suppress, addresses: ['recipient@example.com'] } : undefined);
  });

  it("reads the client's own message tags, leaving out SES's (ses:…) and the service's", () => {
    const record = variant(RECORDS.Delivery!, (r) => Object.assign(r.mail.tags, { invoice: ['inv-42'], customer: ['c_981'] }));
    expect(parseSesEvent(eventBridge(record))!.tags).toEqual({ invoice: 'inv-42', customer: 'c_981' });
    expect(parseSesEvent(eventBridge(RECORDS.Delivery!))!.tags).toEqual({});
  });

  it('reads the template a message was rendered from out of its tags, and nothing from a malformed one', () => {
    const tagged = (name: string, version: string) => variant(RECORDS.Delivery!, (r) => Object.assign(r.mail.tags, { TemplateName: [name], TemplateVersion: [version] }));
    expect(parseSesEvent(eventBridge(tagged('welcome', '3')))!.template).toEqual({ name: 'welcome', version: 3 });
    for (const [name, version] of [['welcome', '0'], ['welcome', '1.5'], ['welcome', 'x'], ['welcome', ' 3'], ['welcome', '0x3'], ['welcome', '3.0'], ['two words', '2'], ['', '2']] as const) {
      expect(parseSesEvent(eventBridge(tagged(name, version)))!.template).toBeUndefined();
    }
    expect(parseSesEvent(eventBridge(RECORDS.Delivery!))!.template).toBeUndefined();
  });

  it('reads the schedule a message was sent for out of its tags, on delivery and engagement events, and nothing from a malformed one', () => {
    const scheduleId = '0b6c5a3e-2f4d-4e8a-9c1b-7d2e3f4a5b6c';
    const tagged = (record: Record<string, any>, value: string) => eventBridge(variant(record, (r) => Object.assign(r.mail.tags, { ScheduleId: [value] })));
    expect(parseSesEvent(tagged(RECORDS.Delivery!, scheduleId))).toMatchObject({ scheduleId, tags: {} });
    expect(parseEngagementEvent(tagged(RECORDS.Open!, scheduleId))).toMatchObject({ scheduleId, tags: {} });
    for (const value of ['not-a-uuid', scheduleId.toUpperCase(), '', `${scheduleId} `]) expect(parseSesEvent(tagged(RECORDS.Delivery!, value))!.scheduleId).toBeUndefined();
    expect(parseSesEvent(eventBridge(RECORDS.Delivery!))!.scheduleId).toBeUndefined();
  });

  it('names every recorded event type by its EventBridge detail-type', () => {
    expect(Object.keys(EVENTBRIDGE_DETAIL_TYPES).sort()).toEqual(Object.keys(RECORDS).sort());
  });

  it('gives a duplicate the same id, in a new envelope too, and different events different ids', () => {
    const first = parseSesEvent(eventBridge(RECORDS.Bounce!, 'envelope-1'))!;
    expect(parseSesEvent(eventBridge(RECORDS.Bounce!, 'envelope-2'))!.id).toBe(first.id);
    const ids = Object.values(RECORDS).map((record) => (parseSesEvent(eventBridge(record)) ?? parseEngagementEvent(eventBridge(record)))!.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('does not suppress after a transient bounce, and keeps its type in the detail', () => {
    const soft = variant(RECORDS.Bounce!, (r) => Object.assign(r.bounce, { bounceType: 'Transient', bounceSubType: 'MailboxFull' }));
    expect(parseSesEvent(eventBridge(soft))).toMatchObject({ status: 'Bounced', suppress: undefined, recipients: [{ detail: 'Transient/MailboxFull' }] });
  });

  it('lower-cases addresses and reads only the recipients an event names', () => {
    const record = variant(RECORDS.Delivery!, (r) => {
      r.mail.destination = ['One@Example.com', 'two@example.com'];
      r.delivery.recipients = ['One@Example.com'];
    });
    expect(parseSesEvent(eventBridge(record))!.recipients.map((r) => r.address)).toEqual(['one@example.com']);
  });

  it.each([
    ['no Organization tag (not sent by this service)', variant(RECORDS.Send!, (r) => delete r.mail.tags.OrganizationId)],
    ['no message id', variant(RECORDS.Send!, (r) => delete r.mail.messageId)],
    ['a Subscription event (not recorded)', { eventType: 'Subscription', mail: mail(), subscription: {} }],
    ['not an object', 'Email Sent'],
  ])('ignores %s', (_what, input) => {
    expect(parseSesEvent(typeof input === 'string' ? input : eventBridge(input))).toBeUndefined();
    expect(parseEngagementEvent(typeof input === 'string' ? input : eventBridge(input))).toBeUndefined();
  });
});

describe('parseEngagementEvent (SES Open and Click records)', () => {
  it('reads an Open: who (the only recipient), when, with what user agent; no delivery state', () => {
    expect(parseEngagementEvent(eventBridge(RECORDS.Open!))).toEqual({
      id: expect.any(String),
      type: 'Open',
      messageId: FIXTURE_MESSAGE_ID,
      organizationId: FIXTURE_ORG,
      at: '2017-08-09T22:00:19.652Z',
      sentAt: '2017-08-05T00:40:02.012Z',
      destination: ['recipient@example.com'],
      recipient: 'recipient@example.com',
      userAgent: RECORDS.Open!.open.userAgent,
      tags: {},
      test: false,
    });
  });

  it('reads a Click with the original link', () => {
    expect(parseEngagementEvent(eventBridge(RECORDS.Click!))).toMatchObject({
      type: 'Click',
      at: '2017-08-09T23:51:25.570Z',
      recipient: 'recipient@example.com',
      url: 'http://docs.aws.amazon.com/ses/latest/DeveloperGuide/send-email-smtp.html',
    });
  });

  it('attributes an event to no recipient when the message had several (SES does not say who)', () => {
    const record = variant(RECORDS.Open!, (r) => (r.mail.destination = ['One@Example.com', 'two@example.com']));
    expect(parseEngagementEvent(eventBridge(record))).toMatchObject({ recipient: undefined, destination: ['one@example.com', 'two@example.com'] });
  });

  it('leaves opens and clicks to parseEngagementEvent, so no reader of delivery state ever sees one', () => {
    expect(parseSesEvent(eventBridge(RECORDS.Open!))).toBeUndefined();
    expect(parseSesEvent(eventBridge(RECORDS.Click!))).toBeUndefined();
    expect(parseEngagementEvent(eventBridge(RECORDS.Delivery!))).toBeUndefined();
  });

  it('gives a redelivered event the same id, and a second open a new one', () => {
    const first = parseEngagementEvent(eventBridge(RECORDS.Open!, 'envelope-1'))!;
    expect(parseEngagementEvent(eventBridge(RECORDS.Open!, 'envelope-2'))!.id).toBe(first.id);
    const later = variant(RECORDS.Open!, (r) => (r.open.timestamp = '2017-08-09T22:05:00.000Z'));
    expect(parseEngagementEvent(eventBridge(later))!.id).not.toBe(first.id);
  });
});

const state = (status: RecipientState['status'], at: string, eventId = `e-${status}-${at}`): RecipientState => ({ status, at, detail: null, eventId });

describe('the recipient state order', () => {
  it('never goes backwards: a late send or delay does not undo a delivery; a complaint follows a delivery', () => {
    const delivered = state('Delivered', '2026-01-01T00:00:02Z');
    expect(supersedes(state('Sent', '2026-01-01T00:00:00Z'), delivered)).toBe(false);
    expect(supersedes(state('Delayed', '2026-01-01T00:00:05Z'), delivered)).toBe(false);
    expect(supersedes(state('Complained', '2026-01-01T00:00:01Z'), delivered)).toBe(true);
    expect(supersedes(delivered, delivered)).toBe(false);
  });

  it('summarises a message: a problem with any recipient wins, otherwise the least advanced recipient', () => {
    const of = (...statuses: RecipientState['status'][]) => messageStatus(statuses.map((status) => ({ status })));
    expect(of()).toBe('Unknown');
    expect(of('Delivered', 'Complained', 'Bounced')).toBe('Complained');
    expect(of('Delivered', 'Bounced')).toBe('Bounced');
    expect(of('Delivered', 'Delivered')).toBe('Delivered');
    expect(of('Delivered', 'Delayed')).toBe('Delayed');
    expect(of('Delivered', 'Sent')).toBe('Sent');
  });

  const anyState = fc.record({
    status: fc.constantFrom('Sent', 'Delayed', 'Delivered', 'Rejected', 'Bounced', 'Complained' as const),
    at: fc.integer({ min: 0, max: 5_000 }).map((ms) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString()),
    detail: fc.constant(null),
    eventId: fc.constantFrom('a', 'b', 'c'),
  });

  // The events, some of them repeated, and the order they arrive in: all drawn by fast-check, so a
  // failure shrinks and replays from its seed.
  const arrivals = fc.tuple(fc.array(anyState, { minLength: 1, maxLength: 12 }), fc.array(fc.nat(), { maxLength: 12 })).chain(([events, picks]) => {
    const repeated = [...events, ...picks.map((i) => events[i % events.length]!)];
    return fc.shuffledSubarray(repeated, { minLength: repeated.length, maxLength: repeated.length }).map((arrived) => ({ events, arrived }));
  });

  it('ends in the same state whatever the order of the events and however often each comes (property)', () => {
    fc.assert(
      fc.property(arrivals, ({ events, arrived }) => {
        const fold = (sequence: RecipientState[]) => sequence.reduce<RecipientState | undefined>((current, next) => (supersedes(next, current) ? next : current), undefined);
        expect(fold(arrived)).toEqual(fold(events));
      }),
      { numRuns: 500 },
    );
  });
});
