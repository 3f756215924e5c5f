/**
 * Opens and clicks through the events function on dynalite (docs/tracking.md): SES's `Open` and
 * `Click` records never move a recipient's delivery state, never suppress and never count in the
 * Organization's reputation; they are counted once per event, in an item that does not grow,
 * with machine opens apart, and the status endpoint and the webhooks tell them.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createEventsDependencies } from '../../functions/events/dependencies';
import type { EventsDependencies } from '../../functions/events/record-event';
import { recordEvent } from '../../functions/events/record-event';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createStatusDependencies } from '../../functions/status/dependencies';
import { createStatusHandler, STATUS_PATH } from '../../functions/status/handler';
import { DynamoDbEngagementStore, MAX_CLICKS } from '../../functions/shared/store/dynamodb-engagement-store';
import { parseEngagementEvent } from '../../functions/shared/delivery/ses-event';
import { itemKey } from '../../functions/shared/store/table';
import { httpApiEvent, lambdaContext } from '../support/events';
import { assertResponseMatchesOpenApi, compileSchema, openApiDocument } from '../support/openapi';
import { loadConfig } from '../../functions/shared/runtime/config';
import { DynamoDbReputationStore } from '../../functions/shared/store/dynamodb-reputation-store';
import { DynamoDbSuppressionStore } from '../../functions/shared/store/dynamodb-suppression-store';
import type { WebhookJob } from '../../functions/shared/webhooks/payload';
import { AesGcmSealer } from '../../functions/shared/webhooks/sealing';
import { DynamoDbAdminStore } from '../../infra/admin/admin-store';
import type { RunningService } from '../../infra/local/emulators';
import { ensureTable, startDynamoDb } from '../../infra/local/emulators';
import { RECORDS, eventBridge, mail, variant } from '../support/ses-fixtures';

let dynamo: RunningService;
let admin: DynamoDbAdminStore;
let deps: EventsDependencies;
let reputation: DynamoDbReputationStore;
let suppressions: DynamoDbSuppressionStore;
const jobs: WebhookJob[] = [];
const clock = Date.parse('2026-11-25T10:00:00Z');
let close: () => void;
let status: ReturnType<typeof createStatusHandler>;
let engagement: DynamoDbEngagementStore;
let documents: ReturnType<typeof createDynamoDbClient>;
let tableName: string;

beforeAll(async () => {
  dynamo = await startDynamoDb();
  tableName = `tracking-${randomUUID()}`;
  await ensureTable(new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint }), tableName);
  const client = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: dynamo.endpoint });
  admin = new DynamoDbAdminStore(client, tableName);
  reputation = new DynamoDbReputationStore(client, tableName);
  suppressions = new DynamoDbSuppressionStore(client, tableName);
  const config = loadConfig({ TABLE_NAME: tableName, DYNAMODB_ENDPOINT: dynamo.endpoint, AWS_REGION: 'us-east-1' });
  deps = { ...createEventsDependencies(config, { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }, { enqueue: async (job) => void jobs.push(job) }), now: () => clock };
  documents = client;
  engagement = new DynamoDbEngagementStore(client, tableName);
  const silent = { ...createStatusDependencies(config, { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }) };
  status = createStatusHandler(silent);
  close = () => client.destroy();
});
afterAll(async () => {
  close();
  await dynamo.close();
});

/** A new Organization (with a webhook), and a key of one of its members. */
async function organization() {
  const { id: organizationId } = await admin.createOrganization({ name: 'Org' });
  const user = await admin.createUser({ email: `${randomUUID()}@users.example.net` });
  await admin.addMember(organizationId, user.id);
  const { key } = await admin.generateKey(user.id);
  return { organizationId, key };
}

/** The status endpoint's answer for one message, checked against openapi.json. */
async function statusOf(caller: { organizationId: string; key: string }, messageId: string): Promise<Record<string, any>> {
  const result = (await status(
    httpApiEvent({ path: STATUS_PATH, headers: { authorization: `Bearer ${caller.key}`, 'content-type': 'application/json' }, body: { OrganizationId: caller.organizationId, MessageIds: [messageId] } }),
    lambdaContext(),
  )) as APIGatewayProxyStructuredResultV2;
  assertResponseMatchesOpenApi({ method: 'POST', path: STATUS_PATH, status: result.statusCode ?? 0, headers: (result.headers ?? {}) as Record<string, string>, body: String(result.body) });
  expect(result.statusCode).toBe(200);
  return JSON.parse(String(result.body)).Messages[0];
}

const webhookSchema = compileSchema(openApiDocument.components.schemas.WebhookEvent);
const payloads = () => jobs.map((job) => JSON.parse(job.payload));

/** A message of a new Organization (with a webhook) to `destination`, and SES's records about it. */
async function message(destination: string[] = ['reader@example.org']) {
  const { organizationId, key } = await organization();
  await admin.setWebhook(organizationId, 'https://hooks.example.org/in', new AesGcmSealer(async () => randomBytes(32)), false);
  const messageId = `msg-${randomUUID()}`;
  const tagged = mail({ messageId, destination, timestamp: '2026-11-25T09:00:00.000Z', tags: { ...mail().tags, OrganizationId: [organizationId] } });
  const as = (record: Record<string, any>, change: (copy: Record<string, any>) => void = () => undefined) =>
    variant(record, (copy) => {
      copy.mail = tagged;
      change(copy);
    });
  const record = (body: Record<string, any>) => recordEvent(JSON.stringify(eventBridge(body)), deps);
  return {
    organizationId,
    key,
    messageId,
    send: () => record(as(RECORDS.Send!)),
    deliver: (at = '2026-11-25T09:00:01.000Z') => record(as(RECORDS.Delivery!, (r) => Object.assign(r.delivery, { timestamp: at, recipients: destination }))),
    open: (at: string, userAgent = RECORDS.Open!.open.userAgent) => record(as(RECORDS.Open!, (r) => Object.assign(r.open, { timestamp: at, userAgent }))),
    click: (at: string, link = 'https://example.org/offer') => record(as(RECORDS.Click!, (r) => Object.assign(r.click, { timestamp: at, link }))),
  };
}

describe('opens and clicks in the events function', () => {
  it('leave the delivery state as it was: no status change, no suppression, no reputation count', async () => {
    const one = await message();
    await one.send();
    await one.deliver();
    const before = await reputation.read(one.organizationId, clock);
    jobs.length = 0;

    expect(await one.open('2026-11-25T09:10:00.000Z')).toBe('recorded');
    await one.click('2026-11-25T09:11:00.000Z');

    const stored = (await deps.deliveries.read([one.messageId])).get(one.messageId)!;
    expect(stored.recipients.map((r) => [r.address, r.status, r.at])).toEqual([['reader@example.org', 'Delivered', '2026-11-25T09:00:01.000Z']]);
    expect(await suppressions.list(one.organizationId)).toEqual([]);
    expect(await reputation.read(one.organizationId, clock)).toEqual(before);
    expect(payloads().map((payload) => payload.type)).toEqual(['email.opened', 'email.clicked']);
    expect((await statusOf(one, one.messageId)).Status).toBe('Delivered');
  });

  it('counts opens by people, keeps the earliest as FirstOpenedAt whatever the arrival order, and lists clicks; per recipient too', async () => {
    const one = await message();
    await one.send();
    await one.deliver('2026-11-25T09:00:01.000Z');
    await one.open('2026-11-25T09:30:00.000Z');
    await one.open('2026-11-25T09:20:00.000Z');
    await one.open('2026-11-25T09:40:00.000Z');
    await one.click('2026-11-25T09:41:00.000Z', 'https://example.org/b');
    await one.click('2026-11-25T09:21:00.000Z', 'https://example.org/a');

    const expected = {
      Opens: 3,
      FirstOpenedAt: '2026-11-25T09:20:00.000Z',
      Clicks: [
        { Url: 'https://example.org/a', At: '2026-11-25T09:21:00.000Z' },
        { Url: 'https://example.org/b', At: '2026-11-25T09:41:00.000Z' },
      ],
    };
    const answer = await statusOf(one, one.messageId);
    expect(answer).toMatchObject({ Status: 'Delivered', ...expected });
    expect(answer.Recipients).toEqual([{ Address: 'reader@example.org', Status: 'Delivered', At: '2026-11-25T09:00:01.000Z', Detail: null, ...expected }]);
  });

  it('records a message of several recipients at message level only (SES does not say who opened)', async () => {
    const many = await message(['a@example.org', 'b@example.org']);
    await many.send();
    await many.deliver();
    await many.open('2026-11-25T09:30:00.000Z');
    const answer = await statusOf(many, many.messageId);
    expect(answer).toMatchObject({ Opens: 1, FirstOpenedAt: '2026-11-25T09:30:00.000Z' });
    expect(answer.Recipients.map((r: any) => [r.Address, r.Opens, r.FirstOpenedAt, r.Clicks])).toEqual([
      ['a@example.org', 0, null, []],
      ['b@example.org', 0, null, []],
    ]);
    expect(payloads().at(-1).data).toMatchObject({ Recipient: null, Machine: false });
  });

  it('records machine opens (within 2 s of delivery, or a listed proxy) without counting them', async () => {
    const one = await message();
    await one.send();
    await one.deliver('2026-11-25T09:00:01.000Z');
    jobs.length = 0;
    await one.open('2026-11-25T09:00:02.500Z', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)');
    await one.open('2026-11-25T09:30:00.000Z', 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)');
    await one.open('2026-11-25T09:30:05.000Z', 'Mozilla/5.0');
    expect(await statusOf(one, one.messageId)).toMatchObject({ Opens: 0, FirstOpenedAt: null });
    expect(payloads().map((payload) => [payload.type, payload.data.Machine])).toEqual([
      ['email.opened', true],
      ['email.opened', true],
      ['email.opened', true],
    ]);

    await one.open('2026-11-25T09:00:03.001Z', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)');
    expect(await statusOf(one, one.messageId)).toMatchObject({ Opens: 1, FirstOpenedAt: '2026-11-25T09:00:03.001Z' });
    const { Item } = await documents.send(new GetCommand({ TableName: tableName, Key: itemKey.message(one.messageId) }));
    expect(Item).toMatchObject({ opens: 1, machineOpens: 3 });
  });

  it('takes an open within 2 s of the send for a machine\'s even before the delivery is recorded', async () => {
    const one = await message();
    jobs.length = 0;
    await one.open('2026-11-25T09:00:01.500Z', 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)');
    expect(payloads()[0].data.Machine).toBe(true);
  });

  it('counts an event SES or SQS delivers again once, and sends its webhook with the same id', async () => {
    const one = await message();
    await one.send();
    await one.deliver();
    jobs.length = 0;
    expect(await one.open('2026-11-25T09:30:00.000Z')).toBe('recorded');
    expect(await one.open('2026-11-25T09:30:00.000Z')).toBe('unchanged');
    expect(await one.click('2026-11-25T09:31:00.000Z')).toBe('recorded');
    expect(await one.click('2026-11-25T09:31:00.000Z')).toBe('unchanged');
    expect(await statusOf(one, one.messageId)).toMatchObject({ Opens: 1, Clicks: [{ Url: 'https://example.org/offer', At: '2026-11-25T09:31:00.000Z' }] });
    expect(new Set(jobs.map((job) => job.webhookId)).size).toBe(2);
  });

  it('sends email.opened and email.clicked webhooks in the documented shape', async () => {
    const one = await message();
    await one.send();
    await one.deliver();
    jobs.length = 0;
    await one.open('2026-11-25T09:30:00.000Z');
    await one.click('2026-11-25T09:31:00.000Z', 'https://example.org/offer?x=1');
    const [opened, clicked] = payloads();
    expect(opened).toEqual({
      type: 'email.opened',
      timestamp: '2026-11-25T09:30:00.000Z',
      data: { OrganizationId: one.organizationId, MessageId: one.messageId, Recipient: 'reader@example.org', At: '2026-11-25T09:30:00.000Z', UserAgent: RECORDS.Open!.open.userAgent, Machine: false, Tags: {} },
    });
    expect(clicked.data).toMatchObject({ Url: 'https://example.org/offer?x=1', Recipient: 'reader@example.org', Machine: false });
    for (const payload of [opened, clicked]) expect(webhookSchema(payload)).toBe(true);
  });

  it('shows another Organization nothing: its status answer for the id is Unknown, without opens or clicks', async () => {
    const one = await message();
    await one.send();
    await one.deliver();
    await one.open('2026-11-25T09:30:00.000Z');
    const other = await organization();
    expect(await statusOf(other, one.messageId)).toEqual({ MessageId: one.messageId, Status: 'Unknown', Recipients: [], Tags: {} });
  });

  it('ignores opens of a test-mode message (tracking is never applied to one)', async () => {
    const one = await message();
    const record = variant(RECORDS.Open!, (r) => (r.mail = mail({ messageId: `test-${randomUUID()}`, tags: { ...mail().tags, OrganizationId: [one.organizationId] } })));
    expect(await recordEvent(JSON.stringify(eventBridge(record)), deps)).toBe('ignored');
  });
});

describe('DynamoDbEngagementStore on dynalite', () => {
  it('keeps a message opened 10,000 times (and clicked past the cap) in an item of bounded size', async () => {
    const one = await message();
    await one.send();
    const base = parseEngagementEvent(eventBridge(variant(RECORDS.Open!, (r) => (r.mail = mail({ messageId: one.messageId, tags: { ...mail().tags, OrganizationId: [one.organizationId] } })))))!;
    const sizeOf = async () => {
      const { Item } = await documents.send(new GetCommand({ TableName: tableName, Key: itemKey.message(one.messageId) }));
      return { item: Item!, bytes: Buffer.byteLength(JSON.stringify(Item)) };
    };
    const at = (i: number) => new Date(Date.parse('2026-11-25T10:00:00.000Z') + i * 1_000).toISOString();
    // The count itself (the claims, one small item per event, are shown above to count a repeat once).
    const record = (i: number, type: 'Open' | 'Click') =>
      engagement.record({ ...base, id: `${type}-${i}`, type, at: at(i), ...(type === 'Click' && { url: `https://example.org/${'x'.repeat(50)}/${i}` }) }, false, 2_000_000_000);
    // Many writers at a time, as concurrent Lambda instances would write.
    const run = async (type: 'Open' | 'Click', from: number, to: number) => {
      for (let i = from; i < to; i += 50) await Promise.all(Array.from({ length: Math.min(50, to - i) }, (_, j) => record(i + j, type)));
    };
    await run('Open', 0, 100);
    await run('Click', 0, MAX_CLICKS);
    const full = await sizeOf();
    await run('Open', 100, 10_000);
    await run('Click', MAX_CLICKS, 3 * MAX_CLICKS);
    const after = await sizeOf();

    expect(after.item).toMatchObject({ opens: 10_000, firstOpenedAt: at(0) });
    expect(after.item.clicks).toHaveLength(MAX_CLICKS);
    // Nothing grew after the first 100 opens and clicks but the counter's digits.
    expect(after.bytes).toBeLessThanOrEqual(full.bytes + 2);
    expect(after.bytes).toBeLessThan(16 * 1024);
  }, 240_000);
});
