/**
 * Many concurrent clients against the local stack over HTTP, a mix of plain sends, idempotent
 * sends with retries, and bad requests: every message is accounted for (SES count = count of
 * `Sent` results, no subject twice), and nothing answers 5xx.
 */
import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { LocalStack } from '../../infra/local/stack';
import { clearEmails, sentEmails } from '../support/ses-store';
import { useLocalStack } from './support';

let stack!: LocalStack;
useLocalStack((started) => {
  stack = started;
});

const CLIENTS = 16;
const REQUESTS_PER_CLIENT = 8;
const MESSAGES_PER_REQUEST = 5;

interface Outcome {
  status: number;
  sent: string[];
  /** A 5xx answer's problem, so that a failure shows it. */
  problem?: unknown;
}

/** What a failed assertion should show of an answer: its status and, for a problem, its title and detail. */
const answered = ({ status, json, replayed }: { status: number; json: any; replayed: boolean }) => ({ status, replayed, ...(status >= 300 && { title: json?.title, detail: json?.detail }) });

async function post(body: unknown, extra: Record<string, string> = {}): Promise<{ status: number; json: any; replayed: boolean }> {
  const response = await fetch(stack.sendUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.demo!.apiKey}`, 'content-type': 'application/json', ...extra },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json(), replayed: response.headers.get('idempotent-replayed') === 'true' };
}

function batch(tag: string, valid = true) {
  return {
    OrganizationId: stack.demo!.organizationId,
    Messages: Array.from({ length: MESSAGES_PER_REQUEST }, (_, i) => ({
      From: `hello@${stack.demo!.senderDomain}`,
      To: [valid || i > 0 ? `c${i}@example.org` : 'not-an-address'],
      Subject: `${tag}/${i}`,
      TextContent: 'load',
    })),
  };
}

describe('the local stack under concurrent load', () => {
  it('accounts for every message and answers no 5xx', async () => {
    await clearEmails(stack.sesUrl);
    const outcomes: Outcome[] = [];
    const subjectsOf = (json: any, tag: string) =>
      (json.Messages ?? []).filter((m: any) => m.Status === 'Sent').map((m: any) => `${tag}/${m.Index}`);

    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let r = 0; r < REQUESTS_PER_CLIENT; r++) {
          const tag = `c${client}-r${r}`;
          const kind = r % 4;
          if (kind === 3) {
            // A bad request: refused whole, nothing sent.
            const { status, json } = await post(batch(tag, false));
            outcomes.push({ status, sent: [], ...(status >= 500 && { problem: json }) });
          } else if (kind === 2) {
            // An idempotent request retried at once, as a client would after a lost response.
            const key = randomUUID();
            const pair = await Promise.all([post(batch(tag), { 'idempotency-key': key }), post(batch(tag), { 'idempotency-key': key })]);
            // Exactly one of the two runs; the other replays its results or is told to wait (409).
            const ran = pair.filter((p) => p.status === 200 && !p.replayed);
            // Each answer's status and problem beside the count, so a failure says what was answered.
            expect({ ran: ran.length, answers: pair.map(answered) }).toEqual({ ran: 1, answers: expect.anything() });
            for (const p of pair) outcomes.push({ status: p.status, sent: p === ran[0] ? subjectsOf(p.json, tag) : [], ...(p.status >= 500 && { problem: p.json }) });
            for (const p of pair.filter((q) => q.replayed)) expect(p.json).toEqual(ran[0]!.json);
          } else {
            const { status, json } = await post(batch(tag));
            outcomes.push({ status, sent: status < 300 ? subjectsOf(json, tag) : [], ...(status >= 500 && { problem: json }) });
          }
        }
      }),
    );

    const statuses = outcomes.map((o) => o.status);
    expect(outcomes.filter((o) => o.status >= 500)).toEqual([]);
    expect(statuses.every((s) => [200, 400, 409].includes(s))).toBe(true);
    const reportedSent = outcomes.flatMap((o) => o.sent);
    const emails = await sentEmails(stack.sesUrl);
    expect(emails.length).toBe(reportedSent.length);
    expect(new Set(emails.map((e) => e.subject)).size).toBe(emails.length);
    expect(new Set(emails.map((e) => e.subject))).toEqual(new Set(reportedSent));
    // 3 of every 4 requests are valid and each carries 5 messages.
    expect(reportedSent.length).toBe(CLIENTS * (REQUESTS_PER_CLIENT / 4) * 3 * MESSAGES_PER_REQUEST);
  }, 120_000);
});
