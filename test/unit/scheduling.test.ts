/**
 * The pieces of scheduled send that need no emulator: `SendAt`'s rules at their edges, the stored
 * form of a message (binary content kept, large bodies in parts), derived ScheduleIds, the
 * EventBridge `at()` expression and wake-up parsing, and the scheduler settings.
 */
import { describe, expect, it } from '@jest/globals';
import { isScheduled, readSendAt } from '../../functions/send/send-at';
import { derivedScheduleId } from '../../functions/send/scheduling';
import type { ValidMessage } from '../../functions/shared/mail/valid-message';
import { ProblemList } from '../../functions/shared/http/body-rules';
import { loadConfig } from '../../functions/shared/runtime/config';
import { decodeMessage, encodeMessage, splitBody } from '../../functions/shared/schedules/message-codec';
import { atExpression, parseWakeUp, scheduleName } from '../../functions/shared/schedules/timer';

const NOW = Date.UTC(2026, 10, 23, 10, 0, 0);
const rules = { now: NOW, maxScheduleDays: 30 };
const text = (at: number) => new Date(at).toISOString().slice(0, 19).replace('T', ' ');
const DAY = 24 * 60 * 60 * 1_000;

function read(value: unknown, expiresAt?: number) {
  const problems = new ProblemList();
  const sendAt = readSendAt(value, '/Messages/0/SendAt', problems, expiresAt, rules);
  return { sendAt, problems: problems.items.map((p) => p.detail) };
}

describe('readSendAt', () => {
  it('takes exactly MAX_SCHEDULE_DAYS ahead, and refuses one second more', () => {
    expect(read(text(NOW + 30 * DAY))).toEqual({ sendAt: NOW + 30 * DAY, problems: [] });
    expect(read(text(NOW + 30 * DAY + 1_000))).toEqual({ sendAt: undefined, problems: ['must be at most 30 days ahead (MAX_SCHEDULE_DAYS)'] });
  });

  it('must be earlier than ExpirationDateTime: equal is refused, a second before is fine', () => {
    expect(read(text(NOW + DAY), NOW + DAY).problems).toEqual(['must be earlier than the message\'s ExpirationDateTime']);
    expect(read(text(NOW + DAY - 1_000), NOW + DAY).sendAt).toBe(NOW + DAY - 1_000);
  });

  it('keeps a time already past (the message is then sent now), and absent or null is no SendAt', () => {
    expect(read('2020-01-01 00:00:00')).toEqual({ sendAt: Date.UTC(2020, 0, 1), problems: [] });
    expect(isScheduled(Date.UTC(2020, 0, 1), NOW)).toBe(false);
    expect(isScheduled(NOW + 1, NOW)).toBe(true);
    expect(isScheduled(undefined, NOW)).toBe(false);
    expect(read(undefined)).toEqual({ sendAt: undefined, problems: [] });
    expect(read(null)).toEqual({ sendAt: undefined, problems: [] });
  });

  it('refuses the wrong shape, an impossible date, a number and a lone surrogate', () => {
    for (const bad of ['2026-11-23T10:00:00', '2026-02-30 10:00:00', '2026-11-23 24:00:00', 1_795_000_000, '2026-11-23 10:00:0\ud800']) {
      expect(read(bad).problems).toHaveLength(1);
    }
  });
});

describe('the stored message', () => {
  it('comes back exactly as validated, binary content included', () => {
    const message = {
      index: 3,
      from: { ascii: 'a@example.com', localPart: 'a', domain: 'example.com' },
      to: ['b@example.org'],
      cc: [],
      bcc: [],
      subject: 'Héllo ✉',
      html: '<p>x</p>',
      sendAt: NOW + DAY,
      // Whatever a later field holds (attachments as bytes, say) survives as it is.
      attachments: [{ fileName: 'a.pdf', content: Buffer.from([0, 1, 2, 255]) }],
    } as unknown as ValidMessage;
    const back = decodeMessage(encodeMessage(message)) as unknown as Record<string, unknown>;
    expect(back).toEqual({ ...message, attachments: [{ fileName: 'a.pdf', content: expect.anything() }] });
    expect(Buffer.from((back.attachments as { content: Uint8Array }[])[0]!.content)).toEqual(Buffer.from([0, 1, 2, 255]));
  });

  it('splits a body into parts of at most the size given, which join back to it', () => {
    const body = Buffer.from(Array.from({ length: 1_000 }, (_, i) => i % 256));
    const parts = splitBody(body, 300);
    expect(parts.map((p) => p.length)).toEqual([300, 300, 300, 100]);
    expect(Buffer.concat(parts)).toEqual(body);
    expect(splitBody(Buffer.alloc(0), 300)).toHaveLength(1);
  });
});

describe('ids and timers', () => {
  it('derives the same UUID-shaped ScheduleId from the same claim and index, another from another', () => {
    const id = derivedScheduleId('claim-1', 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(derivedScheduleId('claim-1', 0)).toBe(id);
    expect(new Set([id, derivedScheduleId('claim-1', 1), derivedScheduleId('claim-2', 0)]).size).toBe(3);
  });

  it('writes at() for the whole second at or after the time, in UTC, never earlier', () => {
    expect(atExpression(Date.UTC(2026, 11, 1, 8, 0, 0))).toBe('at(2026-12-01T08:00:00)');
    expect(atExpression(Date.UTC(2026, 11, 1, 8, 0, 0) + 1)).toBe('at(2026-12-01T08:00:01)');
    expect(scheduleName('3b241101-e2bb-4255-8caf-4136c566a962')).toBe('3b241101-e2bb-4255-8caf-4136c566a962');
    expect(scheduleName('3b241101-e2bb-4255-8caf-4136c566a962', 2)).toMatch(/^[0-9a-zA-Z_.-]{1,64}$/);
  });

  it('reads a wake-up that names a schedule, and nothing else', () => {
    expect(parseWakeUp('{"scheduleId":"3b241101-e2bb-4255-8caf-4136c566a962"}')).toEqual({ scheduleId: '3b241101-e2bb-4255-8caf-4136c566a962' });
    for (const bad of ['', 'not json', '{}', '{"scheduleId":"../etc"}', '[1]']) expect(parseWakeUp(bad)).toBeUndefined();
  });
});

describe('scheduler settings', () => {
  const all = {
    SCHEDULE_GROUP_NAME: 'g',
    SCHEDULE_TARGET_ARN: 'arn:aws:sqs:eu-west-1:123456789012:q',
    SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/r',
    SCHEDULE_DEAD_LETTER_ARN: 'arn:aws:sqs:eu-west-1:123456789012:d',
    SCHEDULE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/q',
  };

  it('takes all five or none, and MAX_SCHEDULE_DAYS from 1 to 365', () => {
    expect(loadConfig({ TABLE_NAME: 't' })).toMatchObject({ scheduler: undefined, maxScheduleDays: 30 });
    expect(loadConfig({ TABLE_NAME: 't', ...all, MAX_SCHEDULE_DAYS: '7' })).toMatchObject({
      maxScheduleDays: 7,
      scheduler: { groupName: 'g', targetArn: all.SCHEDULE_TARGET_ARN, roleArn: all.SCHEDULER_ROLE_ARN, deadLetterArn: all.SCHEDULE_DEAD_LETTER_ARN, queueUrl: all.SCHEDULE_QUEUE_URL },
    });
    expect(() => loadConfig({ TABLE_NAME: 't', SCHEDULE_GROUP_NAME: 'g' })).toThrow(/must be set together/);
    expect(() => loadConfig({ TABLE_NAME: 't', MAX_SCHEDULE_DAYS: '0' })).toThrow(/MAX_SCHEDULE_DAYS/);
    expect(() => loadConfig({ TABLE_NAME: 't', MAX_SCHEDULE_DAYS: '366' })).toThrow(/MAX_SCHEDULE_DAYS/);
  });
});
