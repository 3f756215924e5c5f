import { describe, expect, it } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import { Webhook } from 'standardwebhooks';
import type { DeliveryDependencies } from '../../functions/webhooks/deliver';
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS, deliverWebhook, retryAfter } from '../../functions/webhooks/deliver';
import { AesGcmSealer, SealedSecretError } from '../../functions/shared/webhooks/sealing';
import { webhookUrlProblem } from '../../functions/shared/webhooks/webhook-url';
import type { WebhookRequest } from '../../functions/webhooks/post';

const ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
const SECRET = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const sealer = new AesGcmSealer(async () => Buffer.alloc(32, 9));
const job = { organizationId: ORG, webhookId: 'msg_abc', payload: '{"type":"email.delivered"}' };

async function deps(url: string, answer: () => Promise<number>, allowLoopbackHttp = true): Promise<DeliveryDependencies & { calls: { url: string; request: WebhookRequest }[] }> {
  const sealedSecret = await sealer.seal(SECRET, ORG);
  const calls: { url: string; request: WebhookRequest }[] = [];
  return {
    calls,
    webhooks: { get: async (org) => (org === ORG ? { organizationId: ORG, url, sealedSecret, createdAt: 'x' } : undefined) },
    sealer,
    allowLoopbackHttp,
    post: async (target, request) => {
      calls.push({ url: target, request });
      return answer();
    },
    logger: new Logger({ logLevel: 'SILENT' }),
    now: () => Date.UTC(2026, 0, 1),
  };
}

describe('deliverWebhook', () => {
  it('signs what it posts so that standardwebhooks verifies it with the secret', async () => {
    const d = await deps('https://hooks.example.com/in', async () => 204);
    expect(await deliverWebhook(job, 1, d)).toEqual({ kind: 'delivered' });
    const headers = { ...d.calls[0]!.request.headers };
    expect(headers['webhook-id']).toBe('msg_abc');
    expect(headers['webhook-timestamp']).toBe(String(Date.UTC(2026, 0, 1) / 1000));
    // Verified as of the attempt's own time (the library refuses stale timestamps).
    const verifier = new Webhook(SECRET);
    (verifier as unknown as { verifyTimestamp: () => Date }).verifyTimestamp = () => new Date(Date.UTC(2026, 0, 1));
    expect(verifier.verify(job.payload, headers)).toEqual({ type: 'email.delivered' });
  });

  it('retries a non-2xx answer or no answer on the schedule, and gives up after the last attempt', async () => {
    const failing = await deps('https://hooks.example.com/in', async () => 500);
    expect(await deliverWebhook(job, 1, failing)).toEqual({ kind: 'retry', afterSeconds: 5 });
    const dead = await deps('https://hooks.example.com/in', async () => {
      throw new Error('connect ECONNREFUSED');
    });
    expect(await deliverWebhook(job, MAX_ATTEMPTS - 1, dead)).toEqual({ kind: 'retry', afterSeconds: 36_000 });
    expect(await deliverWebhook(job, MAX_ATTEMPTS, dead)).toEqual({ kind: 'retry', afterSeconds: undefined });
  });

  it('keeps trying for more than 24 hours, with no delay over SQS\'s 12-hour visibility limit', () => {
    expect(RETRY_DELAYS_SECONDS.reduce((sum, s) => sum + s, 0)).toBeGreaterThan(24 * 3600);
    expect(Math.max(...RETRY_DELAYS_SECONDS)).toBeLessThanOrEqual(12 * 3600);
    expect(RETRY_DELAYS_SECONDS.map((_, i) => retryAfter(i + 1))).toEqual([...RETRY_DELAYS_SECONDS]);
  });

  it('drops the delivery when the webhook was removed, or its URL is plain http outside the local stack', async () => {
    const removed = await deps('https://hooks.example.com/in', async () => 200);
    expect(await deliverWebhook({ ...job, organizationId: '00000000-0000-4000-8000-000000000000' }, 1, removed)).toEqual({ kind: 'dropped' });
    const plain = await deps('http://127.0.0.1:9/in', async () => 200, false);
    expect(await deliverWebhook(job, 1, plain)).toEqual({ kind: 'dropped' });
    expect(plain.calls).toEqual([]);
  });
});

describe('webhook URLs and sealed secrets', () => {
  it.each([
    ['https://hooks.example.com/in', false, undefined],
    ['http://127.0.0.1:8080/in', true, undefined],
    ['http://127.0.0.1:8080/in', false, 'the webhook URL must be https://'],
    ['http://hooks.example.com/in', true, 'the webhook URL must be https://, or http:// to 127.0.0.1 on the local stack'],
    ['https://user:pw@hooks.example.com/', false, 'the webhook URL must not carry credentials'],
    ['not a url', false, '"not a url" is not a URL'],
  ])('%s (local: %s): %s', (url, local, problem) => {
    expect(webhookUrlProblem(url, local)).toBe(problem);
  });

  it('opens a sealed secret only with its key and for its Organization', async () => {
    const sealed = await sealer.seal(SECRET, ORG);
    expect(sealed).not.toContain(SECRET.slice(6, 20));
    expect(await sealer.open(sealed, ORG.toUpperCase())).toBe(SECRET);
    await expect(sealer.open(sealed, '00000000-0000-4000-8000-000000000000')).rejects.toThrow(SealedSecretError);
    await expect(new AesGcmSealer(async () => Buffer.alloc(32, 8)).open(sealed, ORG)).rejects.toThrow(SealedSecretError);
    await expect(sealer.open('kms:v1:AAAA', ORG)).rejects.toThrow(/not a locally sealed secret/);
  });
});
