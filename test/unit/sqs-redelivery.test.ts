/**
 * Redelivery and dead letters for the SQS-triggered functions: `eachRecord` reports exactly the
 * records that failed (returned false or threw), the local queue hands a failed record back and
 * moves it to its dead-letter list after `maxReceiveCount` receives, the webhook function backs off
 * after each failed attempt and gives up after the last, and both the webhook and scheduled
 * functions drop (done, not failed) a message that can never be handled, touching nothing.
 * The AWS queue itself is exercised against moto in test/integration/webhooks-aws.test.ts.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import type { FireDependencies } from '../../functions/scheduled/fire';
import { createScheduledHandler } from '../../functions/scheduled/handler';
import { eachRecord } from '../../functions/shared/queue/sqs-batch';
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS } from '../../functions/webhooks/deliver';
import { createWebhookHandler } from '../../functions/webhooks/handler';
import type { WebhookHandlerDependencies } from '../../functions/webhooks/handler';
import { LocalQueue } from '../../infra/local/local-queue';
import { lambdaContext } from '../support/events';

const logger = () => new Logger({ serviceName: 'sqs-redelivery-test', logLevel: 'SILENT' });
const metrics = () => new Metrics({ namespace: 'EmailSendApiTest', serviceName: 'sqs-redelivery-test' });

function record(messageId: string, body: string, receiveCount = 1): SQSRecord {
  return { messageId, receiptHandle: `${messageId}:${receiveCount}`, body, attributes: { ApproximateReceiveCount: String(receiveCount) } } as unknown as SQSRecord;
}
const batch = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

/** Dependencies that fail the test if anything but the named ones is touched. */
function only<T extends object>(allowed: Partial<T>): T {
  return new Proxy(allowed, {
    get(target, name) {
      if (name in target) return target[name as keyof typeof target];
      if (name === 'then') return undefined;
      throw new Error(`touched ${String(name)}`);
    },
  }) as T;
}

describe('eachRecord', () => {
  it('reports exactly the records that returned false or threw, and tells onError about the thrown one', async () => {
    const boom = new Error('table unavailable');
    const outcomes: Record<string, () => Promise<boolean>> = {
      a: async () => true,
      b: async () => false,
      c: async () => {
        throw boom;
      },
      d: async () => true,
    };
    const onError = jest.fn();
    const answer = await eachRecord(batch(...Object.keys(outcomes).map((id) => record(id, id))), (r) => outcomes[r.messageId]!(), onError);
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: 'b' }, { itemIdentifier: 'c' }] });
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onError).toHaveBeenCalledWith(expect.objectContaining({ messageId: 'c' }), boom);
  });

  it('reports nothing for an empty batch', async () => {
    expect(await eachRecord({} as SQSEvent, async () => false, () => undefined)).toEqual({ batchItemFailures: [] });
  });
});

describe('LocalQueue', () => {
  const settle = async (queue: LocalQueue, done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) {
      await queue.settled();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  it('hands a failed record back and, after maxReceiveCount receives, moves it to the dead-letter list', async () => {
    const queue = new LocalQueue({ name: 'q', region: 'us-east-1', maxReceiveCount: 3, visibilitySeconds: 1, timeScale: 0.001 });
    const receives: string[] = [];
    queue.consume(async (event) => {
      receives.push(event.Records[0]!.attributes.ApproximateReceiveCount);
      return { batchItemFailures: [{ itemIdentifier: event.Records[0]!.messageId }] };
    });
    queue.send('poison');
    await settle(queue, () => queue.dead.length > 0);
    await queue.stop();
    expect(receives).toEqual(['1', '2', '3']);
    expect(queue.dead).toEqual(['poison']);
  });

  it('counts a consumer that throws as failed, and deletes a record once it succeeds', async () => {
    const queue = new LocalQueue({ name: 'q', region: 'us-east-1', maxReceiveCount: 3, visibilitySeconds: 1, timeScale: 0.001 });
    let receives = 0;
    queue.consume(async () => {
      receives += 1;
      if (receives === 1) throw new Error('cold start went wrong');
    });
    queue.send('once');
    await settle(queue, () => receives >= 2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await queue.stop();
    expect(receives).toBe(2);
    expect(queue.dead).toEqual([]);
  });
});

describe('the webhook function', () => {
  const job = JSON.stringify({ organizationId: '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10', webhookId: 'msg_1', payload: '{}' });

  function deps(status: number) {
    const retryLater = jest.fn(async (_handle: string, _seconds: number) => undefined);
    const post = jest.fn(async () => status);
    const webhookDeps: WebhookHandlerDependencies = {
      webhooks: { get: async (organizationId) => ({ organizationId, url: 'https://hooks.example.net/email', sealedSecret: 'sealed', createdAt: '2026-01-01T00:00:00Z' }) },
      sealer: { seal: async () => 'sealed', open: async () => 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0' },
      allowLoopbackHttp: false,
      post,
      retries: { retryLater },
      logger: logger(),
      metrics: metrics(),
      now: () => Date.parse('2026-01-01T00:00:00Z'),
    };
    return { webhookDeps, retryLater, post };
  }

  it('after a failed attempt hides the message for the next backoff; after the last it gives up and SQS dead-letters it', async () => {
    const { webhookDeps, retryLater } = deps(500);
    const handler = createWebhookHandler(webhookDeps);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const answer = await handler(batch(record(`m${attempt}`, job, attempt)), lambdaContext());
      expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: `m${attempt}` }] });
    }
    expect(retryLater.mock.calls).toEqual(RETRY_DELAYS_SECONDS.map((seconds, i) => [`m${i + 1}:${i + 1}`, seconds]));
  });

  it('a failing receiver ends in the local queue\'s dead-letter list after the last attempt', async () => {
    const { webhookDeps, post } = deps(503);
    const queue = new LocalQueue({ name: 'webhooks', region: 'us-east-1', maxReceiveCount: MAX_ATTEMPTS, visibilitySeconds: 30, timeScale: 0.000_001 });
    webhookDeps.retries.retryLater = (handle, seconds) => queue.retryLater(handle, seconds);
    queue.consume(createWebhookHandler(webhookDeps));
    queue.send(job);
    for (let i = 0; i < 500 && queue.dead.length === 0; i++) {
      await queue.settled();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await queue.stop();
    expect(post).toHaveBeenCalledTimes(MAX_ATTEMPTS);
    expect(queue.dead).toEqual([job]);
  });

  it.each([['not JSON', '{'], ['JSON that is no delivery job', '{"organizationId":"x"}']])('drops %s: done, not failed, nothing posted', async (_name, body) => {
    const { webhookDeps, post, retryLater } = deps(204);
    const warn = jest.spyOn(webhookDeps.logger, 'warn');
    const answer = await createWebhookHandler(webhookDeps)(batch(record('bad', body)), lambdaContext());
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(post).not.toHaveBeenCalled();
    expect(retryLater).not.toHaveBeenCalled();
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/dropped/), { sqsMessageId: 'bad' });
  });
});

describe('the scheduled-send function', () => {
  function handlerTouching(): ReturnType<typeof createScheduledHandler> {
    return createScheduledHandler(only<FireDependencies>({ logger: logger(), send: only<FireDependencies['send']>({ metrics: metrics() }), now: () => 0 }));
  }

  it.each([['not JSON', 'nope'], ['no schedule id', '{"scheduleId":"not-a-uuid"}']])('drops a wake-up with %s: done, touching no schedule', async (_name, body) => {
    expect(await handlerTouching()(batch(record('bad', body)), lambdaContext())).toEqual({ batchItemFailures: [] });
  });

  it('fails a wake-up it could not fire, so SQS delivers it again (the control for the drops above)', async () => {
    const wakeUp = JSON.stringify({ scheduleId: '0b6f7a8e-2d43-4e0f-9c1a-5e2f3d4c5b6a' });
    expect(await handlerTouching()(batch(record('good', wakeUp)), lambdaContext())).toEqual({ batchItemFailures: [{ itemIdentifier: 'good' }] });
  });
});
