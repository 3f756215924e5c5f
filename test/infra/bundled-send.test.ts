/**
 * The send function's asset, built as the stack builds it (split, everything a cold start reads in
 * the entry and one chunk) and run alone, far from this repository's node_modules, in a fresh
 * Node: every part a cold start does not read is loaded by the request that needs it, from the
 * asset's own chunks, and works. The local stack and the other suites run the TypeScript sources,
 * where an `import()` cannot go wrong the way a bundle's can (a chunk that re-exports the wrong
 * names, a second copy of a shared module, a top-level await waiting for itself).
 *
 * DynamoDB is dynalite and SES the SES emulator, as everywhere (and, for a tenant SES refuses, a
 * stand-in answering as SES does); EventBridge Scheduler and SQS (a scheduled message: its timer,
 * its `email.scheduled` webhook) are moto_server's, so this suite needs it (test/support/moto.ts:
 * skipped on a laptop without it, a failure under CI).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateScheduleGroupCommand, ListSchedulesCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbSuppressionStore } from '../../functions/shared/store/dynamodb-suppression-store';
import { DynamoDbTemplateStore } from '../../functions/shared/templates/template-store';
import { DynamoDbWebhookStore } from '../../functions/shared/webhooks/webhook-store';
import { DynamoDbAdminStore } from '../../infra/admin/admin-store';
import { OrganizationLimitsStore } from '../../infra/admin/limits-store';
import { SEND_ENTRY, buildFunction } from '../../infra/aws/send-bundle';
import { ensureTable, startDynamoDb, startSesEmulator } from '../../infra/local/emulators';
import type { RunningService } from '../../infra/local/emulators';
import { httpApiEvent } from '../support/events';
import type { Moto } from '../support/moto';
import { describeWithMoto, startMoto } from '../support/moto';
import type { StoredEmail } from '../support/ses-store';
import { sentEmails } from '../support/ses-store';

const TABLE = 'bundled-send';
const GROUP = 'EmailSendApi-ScheduleGroup-bundle';

/** Loads the asset, calls its handler with each event in turn, prints the answers. */
const DRIVER = `
import { readFileSync } from 'node:fs';
const [bundleUrl, eventsFile] = process.argv.slice(1);
const { handler } = await import(bundleUrl);
const answers = [];
for (const event of JSON.parse(readFileSync(eventsFile, 'utf8'))) {
  const context = { awsRequestId: event.requestContext.requestId, getRemainingTimeInMillis: () => 20000 };
  const answer = await handler(event, context);
  answers.push({ statusCode: answer.statusCode, headers: answer.headers, body: JSON.parse(answer.body) });
}
console.log('ANSWERS ' + JSON.stringify(answers));
`;

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: { Messages: { Status: string; MessageId?: string; ScheduleId?: string; Error?: { Code: string } }[]; type?: string };
}

type StoredWithParts = StoredEmail & { headers?: { name: string; value: string }[]; attachments?: { contentType: string; filename: string }[] };

describeWithMoto('the send function as deployed, alone in a fresh Node (dynalite, the SES emulator, moto_server)', () => {
  let dir: string;
  let dynamoDb: RunningService;
  let ses: RunningService;
  let moto: Moto;
  let sqs: SQSClient;
  let scheduler: SchedulerClient;
  let env: NodeJS.ProcessEnv;
  let webhookQueue: string;
  let documents: DynamoDBDocumentClient;
  let admin: DynamoDbAdminStore;
  let organizationId: string;
  let liveKey: string;
  let testKey: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bundled-send-'));
    [dynamoDb, ses, moto] = await Promise.all([startDynamoDb(), startSesEmulator(), startMoto(), buildFunction(SEND_ENTRY, join(dir, 'asset'))]);
    const region = moto.config.region;
    await ensureTable(new DynamoDBClient({ region, endpoint: dynamoDb.endpoint }), TABLE);
    documents = createDynamoDbClient({ region, dynamodbEndpoint: dynamoDb.endpoint });
    admin = new DynamoDbAdminStore(documents, TABLE);
    const organization = await admin.createOrganization({ name: 'Bundled' });
    organizationId = organization.id;
    const [live, test] = await Promise.all([admin.createUser({ email: `${randomUUID()}@users.example.net` }), admin.createUser({ email: `${randomUUID()}@users.example.net` })]);
    await Promise.all([admin.addMember(organizationId, live.id), admin.addMember(organizationId, test.id), admin.addSender(organizationId, { domain: 'example.com' })]);
    liveKey = (await admin.generateKey(live.id)).key;
    testKey = (await admin.generateKey(test.id, { test: true })).key;
    // What only some Organizations have: a daily quota, a suppressed address, a webhook, a template.
    await new OrganizationLimitsStore(documents, TABLE, () => new Date()).set(organizationId, { daily: 1_000 });
    await new DynamoDbSuppressionStore(documents, TABLE).add(organizationId, [{ address: 'gone@example.org', reason: 'Bounce', at: new Date().toISOString() }]);
    await new DynamoDbWebhookStore(documents, TABLE).put({ organizationId, url: 'https://hooks.example.com/in', sealedSecret: 'sealed', createdAt: new Date().toISOString() });
    await new DynamoDbTemplateStore(documents, TABLE).save(organizationId, 'receipt', { Subject: 'Receipt {{order}}', TextContent: 'Order {{order}} is paid.' }, new Date());

    sqs = new SQSClient(moto.config);
    scheduler = new SchedulerClient(moto.config);
    await scheduler.send(new CreateScheduleGroupCommand({ Name: GROUP }));
    const wakeUps = (await sqs.send(new CreateQueueCommand({ QueueName: 'schedule-queue' }))).QueueUrl!;
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: wakeUps, AttributeNames: ['QueueArn'] }));
    webhookQueue = (await sqs.send(new CreateQueueCommand({ QueueName: 'webhooks' }))).QueueUrl!;
    env = {
      PATH: process.env.PATH,
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      TABLE_NAME: TABLE,
      DYNAMODB_ENDPOINT: dynamoDb.endpoint,
      SES_ENDPOINT: ses.endpoint,
      AUTH_CACHE_SECONDS: '30',
      WEBHOOK_QUEUE_URL: webhookQueue,
      SCHEDULE_GROUP_NAME: GROUP,
      SCHEDULE_TARGET_ARN: Attributes!.QueueArn!,
      SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/scheduler',
      SCHEDULE_DEAD_LETTER_ARN: Attributes!.QueueArn!,
      SCHEDULE_QUEUE_URL: wakeUps,
      AWS_ENDPOINT_URL_SQS: moto.config.endpoint,
      AWS_ENDPOINT_URL_SCHEDULER: moto.config.endpoint,
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_METRICS_DISABLED: 'true',
    };
  }, 120_000);

  afterAll(async () => {
    documents?.destroy();
    sqs?.destroy();
    scheduler?.destroy();
    await Promise.all([dynamoDb?.close(), ses?.close(), moto?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * One fresh Node process: the asset loaded, then each request sent to its handler in turn. Not
   * synchronously: dynalite and the SES emulator answer from this process's event loop.
   */
  async function runAsset(requests: { key: string; messages: unknown[]; headers?: Record<string, string>; organization?: string }[], extraEnv: Record<string, string> = {}): Promise<Answer[]> {
    const events = requests.map(({ key, messages, headers, organization = organizationId }) =>
      httpApiEvent({ headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: { OrganizationId: organization, Messages: messages } }),
    );
    const eventsFile = join(dir, `events-${randomUUID()}.json`);
    writeFileSync(eventsFile, JSON.stringify(events));
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', DRIVER, pathToFileURL(join(dir, 'asset', 'index.mjs')).href, eventsFile], {
      env: { ...env, ...extraEnv },
      encoding: 'utf8',
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return JSON.parse(stdout.split('\n').find((line) => line.startsWith('ANSWERS '))!.slice('ANSWERS '.length));
  }

  const stored = async (messageId: string | undefined) => (await sentEmails(ses.endpoint)).find((email) => email.messageId === messageId) as StoredWithParts | undefined;
  const message = (overrides: Record<string, unknown>) => ({ To: ['alice@example.org'], From: 'noreply@example.com', Subject: 'Hello', TextContent: 'Hi.', ...overrides });

  /** The asset's answers to the requests, and the chunks its fresh Node loaded meanwhile (a module hook writes them down). */
  async function chunksLoadedBy(requests: Parameters<typeof runAsset>[0]): Promise<{ answers: Answer[]; chunks: string[] }> {
    const hook = join(dir, 'chunk-log-hook.mjs');
    writeFileSync(hook, "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  if (url.includes('/chunks/')) appendFileSync(process.env.CHUNK_LOG, url + '\\n');\n  return next(url, context);\n}\n");
    const log = join(dir, `chunks-${randomUUID()}.log`);
    writeFileSync(log, '');
    const register = `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hook).href)});`;
    const answers = await runAsset(requests, { CHUNK_LOG: log, NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(register)}` });
    return { answers, chunks: readFileSync(log, 'utf8').split('\n').filter(Boolean).map((url) => url.replace(/^.*\/chunks\//, '')) };
  }

  it('sends each kind of message, each loading what it needs on its first use', async () => {
    const manyHeaders = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`X-Custom-${i + 1}`, `value ${i + 1}`]));
    const inTwoHours = new Date(Date.now() + 2 * 3_600_000).toISOString();
    const [plain, raw, attachment, templated, suppressed, keyed, replayed, scheduled, test] = await runAsset([
      { key: liveKey, messages: [message({ Subject: 'Plain' })] },
      // Past Simple content's 15 headers: composed as raw MIME by nodemailer, loaded for it.
      { key: liveKey, messages: [message({ Subject: 'Raw', Headers: manyHeaders })] },
      // No ContentType: nodemailer's extension table, loaded for it.
      { key: liveKey, messages: [message({ Subject: 'Attached', Attachments: [{ FileName: 'report.pdf', Content: Buffer.from('%PDF-1.4').toString('base64') }] })] },
      { key: liveKey, messages: [{ To: ['alice@example.org'], From: 'noreply@example.com', Template: { Name: 'receipt', Variables: { order: 'A-1' } } }] },
      { key: liveKey, messages: [message({ To: ['gone@example.org'] })] },
      { key: liveKey, messages: [message({ Subject: 'Keyed' })], headers: { 'idempotency-key': 'bundle-once' } },
      { key: liveKey, messages: [message({ Subject: 'Keyed' })], headers: { 'idempotency-key': 'bundle-once' } },
      { key: liveKey, messages: [message({ Subject: 'Later', SendAt: inTwoHours })] },
      { key: testKey, messages: [message({ Subject: 'Test mode' })] },
    ]);

    expect(plain!.statusCode).toBe(200);
    expect((await stored(plain!.body.Messages[0]!.MessageId))?.subject).toBe('Plain');

    expect(raw!.body.Messages[0]!.Status).toBe('Sent');
    const rawEmail = await stored(raw!.body.Messages[0]!.MessageId);
    // The emulator keeps the header list of Simple content only: a raw message has none.
    expect(rawEmail).toMatchObject({ subject: 'Raw' });
    expect(rawEmail!.headers).toBeUndefined();

    const attached = await stored(attachment!.body.Messages[0]!.MessageId);
    expect(attached!.attachments).toEqual([expect.objectContaining({ filename: 'report.pdf', contentType: 'application/pdf' })]);

    expect(templated!.body.Messages[0]!.Status).toBe('Sent');
    expect(await stored(templated!.body.Messages[0]!.MessageId)).toMatchObject({ subject: 'Receipt A-1', body: { text: 'Order A-1 is paid.' } });

    expect(suppressed!.body.Messages[0]).toMatchObject({ Status: 'Failed', Error: { Code: 'Suppressed' } });

    expect(keyed!.body.Messages[0]!.Status).toBe('Sent');
    expect(replayed!.headers['Idempotent-Replayed']).toBe('true');
    expect(replayed!.body.Messages[0]!.MessageId).toBe(keyed!.body.Messages[0]!.MessageId);

    const { ScheduleId } = scheduled!.body.Messages[0]!;
    expect(scheduled!.body.Messages[0]!.Status).toBe('Scheduled');
    const { Schedules = [] } = await scheduler.send(new ListSchedulesCommand({ GroupName: GROUP }));
    expect(Schedules.map((schedule) => schedule.Name)).toContain(ScheduleId);
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: webhookQueue, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    expect(Messages.map((queued) => JSON.parse(JSON.parse(queued.Body!).payload))).toEqual([expect.objectContaining({ type: 'email.scheduled', data: expect.objectContaining({ ScheduleId }) })]);

    expect(test!.body.Messages[0]!.MessageId).toMatch(/^test-/);
    expect(await stored(test!.body.Messages[0]!.MessageId)).toBeUndefined();
  }, 90_000);

  it('loads with traceSdkCalls on, whose tracer the entry awaits at start-up from a chunk of its own, and sends', async () => {
    const [answer] = await runAsset([{ key: liveKey, messages: [message({ Subject: 'Traced' })] }], {
      AWS_LAMBDA_FUNCTION_NAME: 'email-send-api-bundle-test',
      POWERTOOLS_TRACE_ENABLED: 'true',
      AWS_XRAY_CONTEXT_MISSING: 'IGNORE_ERROR',
    });
    expect(answer).toMatchObject({ statusCode: 200, body: { Messages: [{ Status: 'Sent' }] } });
  }, 60_000);

  it('pauses an Organization whose tenant Amazon SES refuses, from the chunk loaded for it, and refuses its next request itself', async () => {
    // Amazon SES as it answers a send for a paused tenant (the SES emulator has no tenants to pause).
    const refusing = createServer((request, response) => {
      request.resume();
      if (request.url?.startsWith('/v2/email/outbound-emails')) {
        response.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'SendingPausedException' }).end(JSON.stringify({ message: 'Sending is paused for this tenant.' }));
      } else {
        response.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'NotFoundException' }).end(JSON.stringify({ message: 'Not found.' }));
      }
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    try {
      const organization = await admin.createOrganization({ name: 'Paused tenant' });
      const user = await admin.createUser({ email: `${randomUUID()}@users.example.net` });
      await Promise.all([admin.addMember(organization.id, user.id), admin.addSender(organization.id, { domain: 'example.com' })]);
      const { key } = await admin.generateKey(user.id);
      const [refused, next] = await runAsset(
        [
          { key, organization: organization.id, messages: [message({ Subject: 'Refused' })] },
          { key, organization: organization.id, messages: [message({ Subject: 'After the pause' })] },
        ],
        { SES_TENANTS: 'true', SES_ENDPOINT: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`, AUTH_CACHE_SECONDS: '0' },
      );
      expect(refused!.body.Messages[0]).toMatchObject({ Status: 'Failed', Error: { Code: 'SendingPaused' } });
      // Read from the table (no auth cache): only the pause the first request wrote can refuse it.
      expect(next!.statusCode).toBe(403);
      expect(next!.body.type).toMatch(/\/organization-paused$/);
    } finally {
      await new Promise((resolve) => refusing.close(resolve));
    }
  }, 60_000);

  // Last: its scheduled message and webhook notice would be counted by the tests above.
  it('loads for a plain send none of the chunks only some messages need, and each for the request that needs it', async () => {
    const ONLY_FOR_SOME = ['message-content', 'idempotency', 'scheduling'];
    const loadedOf = (chunks: string[]) => ONLY_FOR_SOME.filter((name) => chunks.some((chunk) => new RegExp(`^${name}-[A-Z0-9]+\\.mjs$`).test(chunk)));
    const plain = await chunksLoadedBy([{ key: liveKey, messages: [message({ Subject: 'Plain, alone' })] }]);
    expect(plain.answers[0]!.body.Messages[0]!.Status).toBe('Sent');
    expect(loadedOf(plain.chunks)).toEqual([]);
    const inTwoHours = new Date(Date.now() + 2 * 3_600_000).toISOString();
    const needing = await chunksLoadedBy([
      { key: liveKey, messages: [message({ Subject: 'Tagged, keyed, later', Tags: { team: 'billing' }, SendAt: inTwoHours })], headers: { 'idempotency-key': `chunks-${randomUUID()}` } },
    ]);
    expect(needing.answers[0]!.body.Messages[0]!.Status).toBe('Scheduled');
    expect(loadedOf(needing.chunks)).toEqual(ONLY_FOR_SOME);
  });
});
