/**
 * Per-Organization reputation against dynalite (CONTRACT section 11 item 3): the events function
 * counts each event once into day counters, judges the Organization from the counting write, and
 * pauses it on its Organization item (the item the send path reads), with the metric and the
 * `organization.paused` webhook, once; `resume` lifts it and starts a fresh window.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createEventsDependencies } from '../../functions/events/dependencies';
import { recordEvent } from '../../functions/events/record-event';
import type { EventsDependencies } from '../../functions/events/record-event';
import { loadConfig } from '../../functions/shared/runtime/config';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbAccessStore } from '../../functions/shared/store/dynamodb-access-store';
import { DynamoDbReputationStore } from '../../functions/shared/store/dynamodb-reputation-store';
import type { WebhookJob } from '../../functions/shared/webhooks/payload';
import { AesGcmSealer } from '../../functions/shared/webhooks/sealing';
import { DynamoDbAdminStore } from '../../infra/admin/admin-store';
import type { RunningService } from '../../infra/local/emulators';
import { ensureTable, startDynamoDb } from '../../infra/local/emulators';
import { RECORDS, eventBridge, mail, variant } from '../support/ses-fixtures';

let dynamo: RunningService;
let admin: DynamoDbAdminStore;
let access: DynamoDbAccessStore;
let store: DynamoDbReputationStore;
let deps: EventsDependencies;
const jobs: WebhookJob[] = [];
let clock = Date.parse('2026-11-23T10:00:00Z');
let close: () => void;
const KEY = randomBytes(32);

beforeAll(async () => {
  dynamo = await startDynamoDb();
  const tableName = `reputation-${randomUUID()}`;
  await ensureTable(new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint }), tableName);
  const client = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: dynamo.endpoint });
  admin = new DynamoDbAdminStore(client, tableName);
  access = new DynamoDbAccessStore(client, tableName);
  store = new DynamoDbReputationStore(client, tableName);
  const config = loadConfig({ TABLE_NAME: tableName, DYNAMODB_ENDPOINT: dynamo.endpoint, AWS_REGION: 'us-east-1', REPUTATION_MIN_SENDS: '20' });
  deps = { ...createEventsDependencies(config, { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }, { enqueue: async (job) => void jobs.push(job) }), now: () => clock };
  close = () => client.destroy();
});
afterAll(async () => {
  close();
  await dynamo.close();
});

async function organization(withWebhook = false): Promise<string> {
  const { id } = await admin.createOrganization({ name: 'Org' });
  if (withWebhook) await admin.setWebhook(id, 'https://hooks.example.org/in', new AesGcmSealer(async () => KEY), false);
  return id;
}

/** One message of `organizationId` to `count` recipients, and the events SES would publish about it. */
function message(organizationId: string, count: number) {
  const messageId = `msg-${randomUUID()}`;
  const destination = Array.from({ length: count }, (_, i) => `r${i}@example.org`);
  const tagged = mail({ messageId, destination, tags: { ...mail().tags, OrganizationId: [organizationId] } });
  const send = { eventType: 'Send', mail: tagged, send: {} };
  const bounce = variant(RECORDS.Bounce!, (r) => {
    r.mail = tagged;
    r.bounce.bouncedRecipients = destination.map((emailAddress) => ({ emailAddress, action: 'failed', status: '5.1.1' }));
  });
  const complaint = variant(RECORDS.Complaint!, (r) => {
    r.mail = tagged;
    r.complaint.complainedRecipients = destination.map((emailAddress) => ({ emailAddress }));
  });
  const record = (body: unknown) => recordEvent(JSON.stringify(eventBridge(body as never)), deps);
  return { send: () => record(send), bounce: () => record(bounce), complaint: () => record(complaint) };
}

describe('DynamoDbReputationStore with the events function', () => {
  it('counts recipients of sends, hard bounces and complaints once each, whatever SES repeats', async () => {
    const org = await organization();
    const one = message(org, 3);
    await one.send();
    await one.send();
    await one.bounce();
    await one.bounce();
    await message(org, 1).complaint();
    expect(await store.read(org, clock)).toEqual({ windowDays: 7, sends: 3, hardBounces: 3, complaints: 1, bounceRate: 1, complaintRate: 1 / 3 });
  });

  it('forgets days that left the window', async () => {
    const org = await organization();
    await message(org, 5).send();
    clock += 7 * 24 * 60 * 60 * 1_000;
    try {
      await message(org, 2).send();
      expect(await store.read(org, clock)).toMatchObject({ sends: 2 });
    } finally {
      clock -= 7 * 24 * 60 * 60 * 1_000;
    }
  });

  it('does not judge an Organization below REPUTATION_MIN_SENDS', async () => {
    const org = await organization();
    for (let i = 0; i < 19; i++) {
      const one = message(org, 1);
      await one.send();
      await one.bounce();
    }
    expect((await access.lookup(undefined, org)).organization?.paused).toBeUndefined();
  });

  it('pauses on the Organization item the send path reads, with the webhook once, and resume lifts it with a fresh window', async () => {
    const org = await organization(true);
    const other = await organization(true);
    await message(other, 40).send();
    const sent = Array.from({ length: 40 }, () => message(org, 1));
    for (const one of sent) await one.send();
    await sent[0]!.bounce();
    expect((await access.lookup(undefined, org)).organization?.paused).toBeUndefined();
    await sent[1]!.bounce();

    const { organization: found } = await access.lookup(undefined, org);
    expect(found?.paused).toEqual({ at: new Date(clock).toISOString(), reason: 'hard-bounce rate 5 % (2 of 40 recipients in the last 7 days) is at or above 5 %' });
    expect((await access.lookup(undefined, other)).organization?.paused).toBeUndefined();
    const paused = jobs.filter((job) => job.organizationId === org && JSON.parse(job.payload).type === 'organization.paused');
    expect(paused).toHaveLength(1);
    expect(JSON.parse(paused[0]!.payload).data).toEqual({ OrganizationId: org, PausedAt: found?.paused?.at, Reason: found?.paused?.reason });

    await sent[3]!.bounce();
    expect(jobs.filter((job) => job.organizationId === org && JSON.parse(job.payload).type === 'organization.paused')).toHaveLength(1);

    expect(await store.resume(org)).toEqual(found?.paused);
    expect((await access.lookup(undefined, org)).organization?.paused).toBeUndefined();
    expect(await store.read(org, clock)).toMatchObject({ sends: 0, hardBounces: 0 });
    expect(await store.resume(org)).toBeUndefined();
    expect(await store.resume(randomUUID())).toBe(false);
  });

  it('pauses for complaints', async () => {
    const org = await organization();
    for (let i = 0; i < 25; i++) {
      const one = message(org, 1);
      await one.send();
      await one.complaint();
    }
    // Judged from the 20th send on, when 19 complaints were in already.
    expect((await access.lookup(undefined, org)).organization?.paused?.reason).toMatch(/^complaint rate 95 % \(19 of 20 recipients in the last 7 days\) is at or above 0.1 %$/);
  });
});
