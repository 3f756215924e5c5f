/**
 * CONTRACT section 6 against the real handler, DynamoDB adapter and SES emulator: replays,
 * conflicts, and a batch that dies part-way and is retried.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Mailer } from '../../functions/shared/mail/ports';
import { SendFailure } from '../../functions/shared/mail/ports';
import type { IdempotencyStore } from '../../functions/shared/store/ports';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';

let h!: Harness;
let tenant!: Tenant;
useHarness((harness, first) => {
  h = harness;
  tenant = first;
});
beforeEach(async () => h.clearEmails());

const withKey = (key: string, who: Tenant = tenant) => authorised(who, { 'idempotency-key': key });
const messages = (n: number) => Array.from({ length: n }, (_, i) => message({ Subject: `Message ${i}`, To: [`user${i}@example.org`] }));

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and body, and sends nothing again', async () => {
    const key = randomUUID();
    const first = await h.invoke({ headers: withKey(key), body: sendBody(tenant, messages(3)) });
    const again = await h.invoke({ headers: withKey(key), body: sendBody(tenant, messages(3)) });
    expect(first.statusCode).toBe(200);
    expect(first.headers['Idempotent-Replayed']).toBeUndefined();
    expect(again.statusCode).toBe(200);
    expect(again.headers['Idempotent-Replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await h.sentEmails()).toHaveLength(3);
  });

  it('treats the same JSON with other key order and spacing as the same body', async () => {
    const key = randomUUID();
    const body = sendBody(tenant);
    await h.invoke({ headers: withKey(key), body });
    const reordered = JSON.stringify({ Messages: body.Messages, OrganizationId: body.OrganizationId }, null, 2);
    const again = await h.invoke({ headers: withKey(key), body: reordered });
    expect(again.headers['Idempotent-Replayed']).toBe('true');
    expect(await h.sentEmails()).toHaveLength(1);
  });

  it('answers 422 for the same key with a different body, and sends nothing', async () => {
    const key = randomUUID();
    await h.invoke({ headers: withKey(key), body: sendBody(tenant, [message({ Subject: 'one' })]) });
    const other = await h.invoke({ headers: withKey(key), body: sendBody(tenant, [message({ Subject: 'two' })]) });
    expect(other.statusCode).toBe(422);
    expect(other.headers['Content-Type']).toBe('application/problem+json');
    expect(await h.sentEmails()).toHaveLength(1);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['non-ASCII', 'clé-1'],
    ['with a control character', 'a\u0001b'],
  ])('answers 400 for a key that is %s', async (_label, key) => {
    const result = await h.invoke({ headers: withKey(key), body: sendBody(tenant) });
    expect(result.statusCode).toBe(400);
    expect(result.body.type).toContain('invalid-idempotency-key');
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('accepts a 255-character key', async () => {
    const result = await h.invoke({ headers: withKey('k'.repeat(254) + randomUUID().slice(0, 1)), body: sendBody(tenant) });
    expect(result.statusCode).toBe(200);
  });

  it('keeps keys apart per user', async () => {
    const key = randomUUID();
    const other = await h.tenant();
    await h.invoke({ headers: withKey(key), body: sendBody(tenant) });
    const second = await h.invoke({ headers: withKey(key, other), body: sendBody(other) });
    expect(second.statusCode).toBe(200);
    expect(second.headers['Idempotent-Replayed']).toBeUndefined();
    expect(await h.sentEmails()).toHaveLength(2);
  });

  it('does not record a refused request: the corrected body may reuse the key', async () => {
    const key = randomUUID();
    const bad = await h.invoke({ headers: withKey(key), body: sendBody(tenant, [message({ To: ['nope'] })]) });
    expect(bad.statusCode).toBe(400);
    const good = await h.invoke({ headers: withKey(key), body: sendBody(tenant) });
    expect(good.statusCode).toBe(200);
    expect(good.headers['Idempotent-Replayed']).toBeUndefined();
  });

  it('sends again after 24 hours: the record has expired', async () => {
    const key = randomUUID();
    await h.invoke({ headers: withKey(key), body: sendBody(tenant) });
    const later = await h.invoke({ headers: withKey(key), body: sendBody(tenant) }, { now: () => Date.now() + 24 * 3600_000 + 5_000 });
    expect(later.headers['Idempotent-Replayed']).toBeUndefined();
    expect(await h.sentEmails()).toHaveLength(2);
  });

  it('sends again without the header', async () => {
    await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) });
    await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) });
    expect(await h.sentEmails()).toHaveLength(2);
  });

  it('answers 409 with Retry-After while the first request is still running, and sends once', async () => {
    const key = randomUUID();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // The first request has claimed the key once it reaches SES: wait for that, not for a fixed time.
    let reached!: () => void;
    const sending = new Promise<void>((resolve) => (reached = resolve));
    const slow: Mailer = {
      send: async (email, signal) => {
        reached();
        await gate;
        return h.deps.mailer.send(email, signal);
      },
    };
    const first = h.invoke({ headers: withKey(key), body: sendBody(tenant) }, { mailer: slow });
    await sending;
    const second = await h.invoke({ headers: withKey(key), body: sendBody(tenant) });
    release();
    expect(second.statusCode).toBe(409);
    expect(second.headers['Retry-After']).toBe('1');
    expect((await first).statusCode).toBe(200);
    expect(await h.sentEmails()).toHaveLength(1);
  });

  it('sends one set for two concurrent identical requests: one answer, the other 409 or a replay', async () => {
    const key = randomUUID();
    const body = sendBody(tenant, messages(5));
    const [a, b] = await Promise.all([h.invoke({ headers: withKey(key), body }), h.invoke({ headers: withKey(key), body })]);
    expect([a.statusCode, b.statusCode].sort()).toEqual(expect.arrayContaining([200]));
    const loser = a.headers['Idempotent-Replayed'] || a.statusCode === 409 ? a : b;
    expect(loser.statusCode === 409 || loser.headers['Idempotent-Replayed'] === 'true').toBe(true);
    expect(await h.sentEmails()).toHaveLength(5);
  });

  it('replays a failed outcome too, without retrying the sends', async () => {
    const key = randomUUID();
    const refusing: Mailer = { send: async () => Promise.reject(new SendFailure('MessageRejected')) };
    const first = await h.invoke({ headers: withKey(key), body: sendBody(tenant) }, { mailer: refusing });
    const again = await h.invoke({ headers: withKey(key), body: sendBody(tenant) });
    expect(first.statusCode).toBe(422);
    expect(again.statusCode).toBe(422);
    expect(again.body).toEqual(first.body);
    expect(await h.sentEmails()).toHaveLength(0);
  });

  it('replays a completed request after its sender was removed, instead of checking it again', async () => {
    const own = await h.tenant(['example.com']);
    const key = randomUUID();
    const first = await h.invoke({ headers: withKey(key, own), body: sendBody(own) });
    expect(first.statusCode).toBe(200);
    await h.admin.removeSender(own.organizationId, { domain: 'example.com' });
    const again = await h.invoke({ headers: withKey(key, own), body: sendBody(own) });
    expect([again.statusCode, again.headers['Idempotent-Replayed'], again.body]).toEqual([200, 'true', first.body]);
    // A new request from the removed sender is refused, as before.
    expect((await h.invoke({ headers: withKey(randomUUID(), own), body: sendBody(own) })).statusCode).toBe(403);
    expect(await h.sentEmails()).toHaveLength(1);
  });

  it('keeps a test key\'s keys apart from the live key\'s: the same key sent live afterwards sends, it does not replay the test answer', async () => {
    const own = await h.tenant();
    const key = randomUUID();
    const test = { ...own, apiKey: (await h.admin.rotateKey(own.userId, { test: true })).key };
    const simulated = await h.invoke({ headers: withKey(key, test), body: sendBody(own) });
    expect(simulated.body.Messages[0].MessageId).toMatch(/^test-/);
    const live = { ...own, apiKey: (await h.admin.rotateKey(own.userId)).key };
    const sent = await h.invoke({ headers: withKey(key, live), body: sendBody(own) });
    expect([sent.statusCode, sent.headers['Idempotent-Replayed']]).toEqual([200, undefined]);
    expect(sent.body.Messages[0].MessageId).not.toMatch(/^test-/);
    expect(await h.sentEmails()).toHaveLength(1);
    // And a retry of the live request replays the live answer.
    const again = await h.invoke({ headers: withKey(key, live), body: sendBody(own) });
    expect([again.headers['Idempotent-Replayed'], again.body]).toEqual(['true', sent.body]);
  });

  it('keeps them apart whatever the keys spell: a live "test:K" is not a test key\'s "K"', async () => {
    const own = await h.tenant();
    const key = randomUUID();
    const test = { ...own, apiKey: (await h.admin.rotateKey(own.userId, { test: true })).key };
    expect((await h.invoke({ headers: withKey(key, test), body: sendBody(own) })).body.Messages[0].MessageId).toMatch(/^test-/);
    const live = { ...own, apiKey: (await h.admin.rotateKey(own.userId)).key };
    const sent = await h.invoke({ headers: withKey(`test:${key}`, live), body: sendBody(own) });
    expect([sent.statusCode, sent.headers['Idempotent-Replayed']]).toEqual([200, undefined]);
    expect(await h.sentEmails()).toHaveLength(1);
  });

  it('does not send a message whose in-flight checkpoint cannot be written', async () => {
    const real = h.deps.idempotency;
    const broken: IdempotencyStore = {
      create: (...args) => real.create(...args),
      get: (scope) => real.get(scope),
      takeOver: (...args) => real.takeOver(...args),
      checkpoints: (...args) => real.checkpoints(...args),
      complete: (...args) => real.complete(...args),
      checkpoint: async () => Promise.reject(new Error('storage down')),
    };
    const result = await h.invoke({ headers: withKey(randomUUID()), body: sendBody(tenant) }, { idempotency: broken });
    expect(result.body.Messages[0]).toMatchObject({ Status: 'Failed', Error: { Code: 'StorageUnavailable', Retryable: true } });
    expect(await h.sentEmails()).toHaveLength(0);
  });
});

describe('a batch that dies part-way', () => {
  it('is resumed by a retry with the same key: every message exactly once, the lost one reported OutcomeUnknown', async () => {
    const key = randomUUID();
    const n = 6;
    const k = 2;
    let calls = 0;
    // Messages 0..k-1 go through; message k reaches SES and then the invocation "dies": its
    // answer never comes back (as when Lambda times out or the process is killed).
    const dying: Mailer = {
      send: async (email, signal) => {
        const receipt = await h.deps.mailer.send(email, signal);
        if (++calls > k) return new Promise(() => undefined);
        return receipt;
      },
    };
    const body = sendBody(tenant, messages(n));
    // A short Lambda budget, so the abandoned invocation's own timers are over soon after the test.
    const abandoned = h.invoke({ headers: withKey(key), body }, { mailer: dying, config: { ...h.config, sendConcurrency: 1 } }, 4_000);
    void abandoned;
    await waitFor(async () => (await h.sentEmails()).length === k + 1);

    // Before the first invocation's time is up, the retry is told to wait.
    const early = await h.invoke({ headers: withKey(key), body });
    expect(early.statusCode).toBe(409);

    // After it (the invocation is certainly gone), the retry resumes.
    const later = () => Date.now() + 60_000;
    const retry = await h.invoke({ headers: withKey(key), body }, { now: later });
    const emails = await h.sentEmails();
    expect(emails).toHaveLength(n);
    expect(new Set(emails.map((e) => e.subject)).size).toBe(n);

    expect(retry.statusCode).toBe(207);
    const results = retry.body.Messages;
    expect(results.map((r: { Index: number }) => r.Index)).toEqual([...Array(n).keys()]);
    for (let i = 0; i < k; i++) {
      const email = emails.find((e) => e.subject === `Message ${i}`)!;
      expect(results[i]).toEqual({ Index: i, Status: 'Sent', MessageId: email.messageId });
    }
    expect(results[k]).toMatchObject({ Status: 'Failed', Error: { Code: 'OutcomeUnknown', Retryable: false } });
    for (let i = k + 1; i < n; i++) expect(results[i].Status).toBe('Sent');

    // And the response is now settled: a further retry replays it, sending nothing.
    const replay = await h.invoke({ headers: withKey(key), body }, { now: later });
    expect(replay.headers['Idempotent-Replayed']).toBe('true');
    expect(replay.body).toEqual(retry.body);
    expect(await h.sentEmails()).toHaveLength(n);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
