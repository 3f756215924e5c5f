/** The reputation rules of functions/shared/domain/reputation.ts: the window, the tally, the judgement. */
import { describe, expect, it } from '@jest/globals';
import { daysBeforeWindow, judge, summarise, tallyOf, windowDays } from '../../functions/shared/domain/reputation';
import type { DayCounts } from '../../functions/shared/domain/reputation';

const NOW = Date.parse('2026-11-23T10:00:00Z');
const THRESHOLDS = { bounceRate: 0.05, complaintRate: 0.001, minSends: 200 };
const recipients = (n: number) => Array.from({ length: n }, (_, i) => ({ address: `r${i}@example.org` })) as never[];

describe('windowDays', () => {
  it('is today and the six UTC days before, and the week before that is what may be dropped', () => {
    expect(windowDays(NOW)).toEqual(['2026-11-23', '2026-11-22', '2026-11-21', '2026-11-20', '2026-11-19', '2026-11-18', '2026-11-17']);
    expect(daysBeforeWindow(NOW)[0]).toBe('2026-11-16');
    expect(daysBeforeWindow(NOW)).toHaveLength(7);
  });
});

describe('tallyOf', () => {
  it('counts sends, permanent bounces and complaints by recipient, and nothing else', () => {
    expect(tallyOf({ type: 'Send', recipients: recipients(3), suppress: undefined })).toEqual({ sends: 3 });
    expect(tallyOf({ type: 'Bounce', recipients: recipients(2), suppress: { reason: 'Bounce', addresses: [] } })).toEqual({ bounces: 2 });
    expect(tallyOf({ type: 'Bounce', recipients: recipients(2), suppress: undefined })).toBeUndefined();
    expect(tallyOf({ type: 'Complaint', recipients: recipients(1), suppress: { reason: 'Complaint', addresses: [] } })).toEqual({ complaints: 1 });
    expect(tallyOf({ type: 'Delivery', recipients: recipients(1), suppress: undefined })).toBeUndefined();
  });

  it('never counts mail to the mailbox simulator as a send that dilutes the rates (audit round 3, finding 6)', () => {
    const to = (...addresses: string[]) => addresses.map((address) => ({ address })) as never[];
    expect(tallyOf({ type: 'Send', recipients: to('success+1@simulator.amazonses.com', 'success@Simulator.AmazonSES.com'), suppress: undefined })).toBeUndefined();
    expect(tallyOf({ type: 'Send', recipients: to('success@simulator.amazonses.com', 'ada@example.org'), suppress: undefined })).toEqual({ sends: 1 });
    // A simulated bounce or complaint weighs like a real one: its send and its bounce, counted together.
    expect(tallyOf({ type: 'Bounce', recipients: to('bounce@simulator.amazonses.com', 'ada@example.org'), suppress: { reason: 'Bounce', addresses: [] } })).toEqual({ bounces: 2, sends: 1 });
    expect(tallyOf({ type: 'Complaint', recipients: to('complaint@simulator.amazonses.com'), suppress: { reason: 'Complaint', addresses: [] } })).toEqual({ complaints: 1, sends: 1 });
    // Look-alike domains are real mail.
    expect(tallyOf({ type: 'Send', recipients: to('a@simulator.amazonses.com.example.org', 'b@notsimulator.amazonses.com'), suppress: undefined })).toEqual({ sends: 2 });
  });
});

describe('summarise', () => {
  it('adds the days of the window only', () => {
    const days: Record<string, Partial<DayCounts>> = {
      '2026-11-23': { sends: 100, bounces: 5 },
      '2026-11-17': { sends: 100, complaints: 1 },
      '2026-11-16': { sends: 1_000, bounces: 900 },
    };
    const reputation = summarise((day) => days[day], NOW);
    expect(reputation).toEqual({ windowDays: 7, sends: 200, hardBounces: 5, complaints: 1, bounceRate: 0.025, complaintRate: 0.005 });
  });

  it('has rates of 0 while nothing was sent', () => {
    expect(summarise((day) => (day === '2026-11-23' ? { bounces: 3 } : undefined), NOW)).toMatchObject({ sends: 0, bounceRate: 0, complaintRate: 0 });
  });
});

describe('judge', () => {
  const at = (sends: number, hardBounces: number, complaints: number) => ({
    windowDays: 7,
    sends,
    hardBounces,
    complaints,
    bounceRate: hardBounces / sends,
    complaintRate: complaints / sends,
  });

  it('judges nobody below the minimum of sends', () => {
    expect(judge(at(199, 199, 199), THRESHOLDS)).toBeUndefined();
  });

  it('pauses at the bounce threshold, not below, and says why in numbers', () => {
    expect(judge(at(200, 9, 0), THRESHOLDS)).toBeUndefined();
    expect(judge(at(200, 10, 0), THRESHOLDS)).toBe('hard-bounce rate 5 % (10 of 200 recipients in the last 7 days) is at or above 5 %');
  });

  it('pauses at the complaint threshold', () => {
    expect(judge(at(1_000, 0, 0), THRESHOLDS)).toBeUndefined();
    expect(judge(at(1_000, 0, 1), THRESHOLDS)).toMatch(/^complaint rate 0.1 % \(1 of 1000 recipients in the last 7 days\) is at or above 0.1 %$/);
  });
});
