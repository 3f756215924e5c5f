/**
 * The webhook path as it runs in an AWS account, against moto_server's SQS and KMS (moto 5) and
 * dynalite: the admin CLI's `webhook set` on a deployed table seals the secret with KMS
 * (`--kms-key` or `WEBHOOK_KMS_KEY_ID`); the events function's own AWS wiring queues the webhook on
 * SQS (`SqsWebhookQueue.enqueue`); the webhook function's own AWS wiring opens the secret with
 * `KmsSealer`, signs, and after a failed attempt hides the message for the backoff
 * (`ChangeMessageVisibility`); a record that cannot be handled comes back and ends in the
 * dead-letter queue through the queue's redrive policy. Only the HTTP POST is a recording fake: in
 * AWS the poster refuses this machine's addresses, as it must.
 *
 * Needs `moto_server` (test/support/moto.ts: skipped on a laptop without it, a failure under CI).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateKeyCommand, DecryptCommand, InvalidCiphertextException, KMSClient } from '@aws-sdk/client-kms';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import { Logger } from '@aws-lambda-powertools/logger';
import { Webhook } from 'standardwebhooks';
import { createEventsDependencies } from '../../functions/events/dependencies';
import { createEventsHandler } from '../../functions/events/handler';
import { createDependencies as createSendDependencies } from '../../functions/send/dependencies';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import type { Config } from '../../functions/shared/runtime/config';
import { loadConfig } from '../../functions/shared/runtime/config';
import { KmsSealer } from '../../functions/shared/webhooks/sealing';
import { DynamoDbWebhookStore } from '../../functions/shared/webhooks/webhook-store';
import { RETRY_DELAYS_SECONDS } from '../../functions/webhooks/deliver';
import { createWebhookDependencies } from '../../functions/webhooks/dependencies';
import { createWebhookHandler } from '../../functions/webhooks/handler';
import type { WebhookRequest } from '../../functions/webhooks/post';
import type { RunningService } from '../../infra/local/emulators';
import { ensureTable, startDynamoDb } from '../../infra/local/emulators';
import { admin, adminJson } from '../local/helpers';
import { describeWithMoto, startMoto } from '../support/moto';
import type { Moto } from '../support/moto';
import { FIXTURE_ORG, RECORDS, eventBridge } from '../support/ses-fixtures';
import { peek, pollOnce } from '../support/sqs-event-source';

const silent = new Logger({ serviceName: 'webhooks-aws-test', logLevel: 'SILENT' });

interface Queue {
  url: string;
  arn: string;
  dead: { url: string; arn: string };
}

describeWithMoto('the webhook path in AWS (moto_server SQS and KMS)', () => {
  let moto: Moto;
  let dynamo: RunningService;
  let sqs: SQSClient;
  let kms: KMSClient;
  let keyArn: string;
  let otherKeyArn: string;
  const tableName = `webhooks-aws-${randomUUID()}`;
  let adminEnv: Record<string, string>;
  const saved = { sqs: process.env.AWS_ENDPOINT_URL_SQS, kms: process.env.AWS_ENDPOINT_URL_KMS };

  async function queue(name: string, visibilitySeconds: number, maxReceiveCount: number): Promise<Queue> {
    const arnOf = async (url: string) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
    const deadUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dead` }))).QueueUrl!;
    const dead = { url: deadUrl, arn: await arnOf(deadUrl) };
    const attributes = { VisibilityTimeout: String(visibilitySeconds), RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dead.arn, maxReceiveCount }) };
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl!;
    return { url, arn: await arnOf(url), dead };
  }

  /** The functions' configuration as the stack sets it, with this queue. */
  function functionConfig(q: Queue): Config {
    return loadConfig({ TABLE_NAME: tableName, AWS_REGION: moto.config.region, DYNAMODB_ENDPOINT: dynamo.endpoint, WEBHOOK_QUEUE_URL: q.url, WEBHOOK_KMS_KEY_ID: keyArn });
  }

  /** The webhook function as its AWS composition root builds it, posting to a recorder instead of the network. */
  function webhookFunction(config: Config, answers: number[], posted: WebhookRequest[]) {
    return createWebhookHandler({
      ...createWebhookDependencies(config),
      logger: silent,
      post: async (_url, request) => {
        posted.push(request);
        return answers.shift() ?? 204;
      },
    });
  }

  beforeAll(async () => {
    [moto, dynamo] = await Promise.all([startMoto(), startDynamoDb()]);
    // The production wiring builds its SQS and KMS clients itself; the SDK's own endpoint variables point them here.
    process.env.AWS_ENDPOINT_URL_SQS = moto.config.endpoint;
    process.env.AWS_ENDPOINT_URL_KMS = moto.config.endpoint;
    sqs = new SQSClient(moto.config);
    kms = new KMSClient(moto.config);
    keyArn = (await kms.send(new CreateKeyCommand({ Description: 'webhook secrets' }))).KeyMetadata!.Arn!;
    otherKeyArn = (await kms.send(new CreateKeyCommand({ Description: 'another stack' }))).KeyMetadata!.Arn!;
    const ddb = new DynamoDBClient({ region: moto.config.region, endpoint: dynamo.endpoint });
    await ensureTable(ddb, tableName);
    ddb.destroy();
    adminEnv = { DYNAMODB_ENDPOINT: dynamo.endpoint, AWS_REGION: moto.config.region };
    await adminJson(adminEnv, 'org', 'create', '--name', 'Acme', '--id', FIXTURE_ORG, '--table', tableName);
  }, 30_000);

  afterAll(async () => {
    process.env.AWS_ENDPOINT_URL_SQS = saved.sqs;
    process.env.AWS_ENDPOINT_URL_KMS = saved.kms;
    if (saved.sqs === undefined) delete process.env.AWS_ENDPOINT_URL_SQS;
    if (saved.kms === undefined) delete process.env.AWS_ENDPOINT_URL_KMS;
    sqs?.destroy();
    kms?.destroy();
    await Promise.all([moto?.stop(), dynamo?.close()]);
  });

  /** The table's webhook rows, through the store the functions read them with. */
  async function withWebhookStore<T>(use: (store: DynamoDbWebhookStore) => Promise<T>): Promise<T> {
    const documents = createDynamoDbClient({ region: moto.config.region, dynamodbEndpoint: dynamo.endpoint });
    try {
      return await use(new DynamoDbWebhookStore(documents, tableName));
    } finally {
      documents.destroy();
    }
  }
  const storedSealedSecret = (organizationId: string) => withWebhookStore(async (store) => String((await store.get(organizationId))?.sealedSecret));

  it('webhook set on a deployed table seals the secret with the KMS key, bound to its Organization (moto enforces the context)', async () => {
    const { secret } = await adminJson(adminEnv, 'webhook', 'set', '--org', FIXTURE_ORG, '--url', 'https://hooks.example.net/email', '--table', tableName, '--kms-key', keyArn);
    const sealed = await storedSealedSecret(FIXTURE_ORG);
    expect(sealed).toMatch(/^kms:v1:/);
    expect(sealed).not.toContain(secret);
    const blob = Buffer.from(sealed.slice('kms:v1:'.length), 'base64');
    const plaintext = (await kms.send(new DecryptCommand({ KeyId: keyArn, CiphertextBlob: blob, EncryptionContext: { organizationId: FIXTURE_ORG } }))).Plaintext!;
    expect(Buffer.from(plaintext).toString('utf8')).toBe(secret);
    // Another Organization's context, or none, does not open it.
    await expect(kms.send(new DecryptCommand({ KeyId: keyArn, CiphertextBlob: blob, EncryptionContext: { organizationId: randomUUID() } }))).rejects.toBeInstanceOf(InvalidCiphertextException);
    await expect(kms.send(new DecryptCommand({ KeyId: keyArn, CiphertextBlob: blob }))).rejects.toBeInstanceOf(InvalidCiphertextException);
  });

  it('KmsSealer opens a secret for its own Organization only, and only under its own key', async () => {
    const [org, other] = [randomUUID(), randomUUID()];
    const sealer = new KmsSealer(kms, keyArn);
    const sealed = await sealer.seal('whsec_c2VjcmV0', org);
    await expect(sealer.open(sealed, org)).resolves.toBe('whsec_c2VjcmV0');
    // The owner is compared as the canonical (lower-case) UUID.
    await expect(sealer.open(sealed, org.toUpperCase())).resolves.toBe('whsec_c2VjcmV0');
    await expect(sealer.open(sealed, other)).rejects.toBeInstanceOf(InvalidCiphertextException);
    await expect(new KmsSealer(kms, otherKeyArn).open(sealed, org)).rejects.toThrow();
  });

  it('webhook set takes the key from WEBHOOK_KMS_KEY_ID, and refuses a deployed table with neither', async () => {
    const { secret } = await adminJson({ ...adminEnv, WEBHOOK_KMS_KEY_ID: otherKeyArn }, 'webhook', 'set', '--org', FIXTURE_ORG, '--url', 'https://hooks.example.net/email', '--table', tableName);
    const blob = Buffer.from((await storedSealedSecret(FIXTURE_ORG)).slice('kms:v1:'.length), 'base64');
    const opened = await kms.send(new DecryptCommand({ KeyId: otherKeyArn, CiphertextBlob: blob, EncryptionContext: { organizationId: FIXTURE_ORG } }));
    expect(Buffer.from(opened.Plaintext!).toString('utf8')).toBe(secret);
    // The function's key is not the one that sealed it: refused rather than opened.
    await expect(kms.send(new DecryptCommand({ KeyId: keyArn, CiphertextBlob: blob, EncryptionContext: { organizationId: FIXTURE_ORG } }))).rejects.toThrow();

    const refused = await admin(adminEnv, 'webhook', 'set', '--org', FIXTURE_ORG, '--url', 'https://hooks.example.net/email', '--table', tableName);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--kms-key|WEBHOOK_KMS_KEY_ID/);
  });

  it('an SES event queues its webhook on SQS; a failing receiver is retried after the backoff; a 2xx ends it, signed with the secret', async () => {
    const { secret } = await adminJson(adminEnv, 'webhook', 'set', '--org', FIXTURE_ORG, '--url', 'https://hooks.example.net/email', '--table', tableName, '--kms-key', keyArn);
    // A default visibility far longer than the first backoff: the message can only come back early through ChangeMessageVisibility.
    const q = await queue(`webhooks-${randomUUID()}`, 120, 8);
    const config = functionConfig(q);

    const events = createEventsHandler({ ...createEventsDependencies(config), logger: silent });
    const answer = await events({ Records: [{ messageId: 'e1', body: JSON.stringify(eventBridge(RECORDS.Delivery!, randomUUID())) } as never] }, {} as never);
    expect(answer).toEqual({ batchItemFailures: [] });

    const posted: WebhookRequest[] = [];
    const deliver = webhookFunction(config, [500, 204], posted);
    const first = await pollOnce(sqs, q, deliver, 5);
    expect(first.records).toHaveLength(1);
    expect(first.failed).toEqual([first.records[0]!.messageId]);
    expect(posted).toHaveLength(1);
    // Hidden for the backoff, not handed straight back.
    expect(await peek(sqs, q.url)).toEqual([]);

    const waitedFrom = Date.now();
    let second = await pollOnce(sqs, q, deliver, 20);
    if (second.records.length === 0) second = await pollOnce(sqs, q, deliver, 20);
    expect(second.records).toHaveLength(1);
    expect(second.records[0]!.attributes.ApproximateReceiveCount).toBe('2');
    expect(second.failed).toEqual([]);
    // Back after the first backoff (5 s), long before the queue's own 120 s.
    expect(Date.now() - waitedFrom).toBeLessThan(60_000);
    expect(RETRY_DELAYS_SECONDS[0]).toBeLessThan(60);

    expect(posted).toHaveLength(2);
    const delivered = posted[1]!;
    const verified = new Webhook(secret).verify(delivered.body, delivered.headers) as { type: string; data: { MessageId: string } };
    expect(verified.type).toMatch(/delivered/i);
    expect(delivered.headers['webhook-id']).toBe(posted[0]!.headers['webhook-id']);
    // Delivered: deleted, nothing dead.
    expect(await peek(sqs, q.url)).toEqual([]);
    expect(await peek(sqs, q.dead.url)).toEqual([]);
  }, 60_000);

  it('the send function\'s AWS wiring queues organization.paused on SQS when SES refuses a paused tenant', async () => {
    // Amazon SES as it answers a send for a paused tenant.
    const refusing = createServer((request, response) => {
      request.resume();
      response.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'SendingPausedException' }).end(JSON.stringify({ message: 'Sending is paused for this tenant.' }));
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const organizationId = randomUUID();
    await adminJson(adminEnv, 'org', 'create', '--name', 'Paused', '--id', organizationId, '--table', tableName);
    await adminJson(adminEnv, 'webhook', 'set', '--org', organizationId, '--url', 'https://hooks.example.net/email', '--table', tableName, '--kms-key', keyArn);
    const q = await queue(`webhooks-${randomUUID()}`, 30, 3);
    try {
      const config = loadConfig({ TABLE_NAME: tableName, AWS_REGION: moto.config.region, DYNAMODB_ENDPOINT: dynamo.endpoint, WEBHOOK_QUEUE_URL: q.url, SES_TENANTS: 'true', SES_ENDPOINT: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`, SES_MAX_SEND_RATE: '10' });
      const send = createSendDependencies(config);
      const email = { organizationId, from: 'noreply@example.com', to: ['ada@example.org'], cc: [], bcc: [], subject: 'Refused', text: 'Hi' };
      await expect(send.mailer.send(email)).rejects.toMatchObject({ code: 'SendingPaused' });
      const [queued] = await peek(sqs, q.url);
      const job = JSON.parse(queued!.Body!) as { organizationId: string; payload: string };
      expect(job.organizationId).toBe(organizationId);
      expect(JSON.parse(job.payload)).toMatchObject({ type: 'organization.paused', data: { OrganizationId: organizationId, Reason: expect.any(String) } });
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
  }, 60_000);

  it('a delivery whose secret does not open for its Organization fails every time and ends in the dead-letter queue', async () => {
    // The sealed secret of one Organization copied onto another's item: KMS refuses it under the other's context.
    await adminJson(adminEnv, 'webhook', 'set', '--org', FIXTURE_ORG, '--url', 'https://hooks.example.net/email', '--table', tableName, '--kms-key', keyArn);
    const thief = randomUUID();
    await withWebhookStore(async (store) => store.put({ ...(await store.get(FIXTURE_ORG))!, organizationId: thief }));

    const maxReceiveCount = 3;
    const q = await queue(`poison-${randomUUID()}`, 1, maxReceiveCount);
    await sqs.send(new SendMessageCommand({
      QueueUrl: q.url,
      MessageBody: JSON.stringify({ organizationId: thief, webhookId: `msg_${randomUUID()}`, payload: '{}' }),
    }));
    const posted: WebhookRequest[] = [];
    const deliver = webhookFunction(functionConfig(q), [], posted);
    let receives = 0;
    for (let i = 0; i < 30 && (await peek(sqs, q.dead.url, 0)).length === 0; i++) {
      const poll = await pollOnce(sqs, q, deliver, 2);
      receives += poll.records.length;
      expect(poll.failed).toEqual(poll.records.map((r) => r.messageId));
    }
    expect(receives).toBe(maxReceiveCount);
    expect(posted).toEqual([]);
    const [dead] = await peek(sqs, q.dead.url);
    expect(JSON.parse(dead!.Body!)).toMatchObject({ organizationId: thief });
    expect(await peek(sqs, q.url)).toEqual([]);
  }, 60_000);
});
