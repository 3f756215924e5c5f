/**
 * Opens and clicks through the events function on dynalite (docs/tracking.md): SES's `Open` and
 * `Click` records never move a recipient's delivery state, never suppress and never count in the
 * Organization's reputation.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createEventsDependencies } from '../../functions/events/dependencies';
import type { EventsDependencies } from '../../functions/events/record-event';
import { recordEvent } from '../../functions/events/record-event';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
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

beforeAll(async () => {
  dynamo = await startDynamoDb();
  const tableName = `tracking-${randomUUID()}`;
  await ensureTable(new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint }), tableName);
  const client = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: dynamo.endpoint });
  admin = new DynamoDbAdminStore(client, tableName);
  reputation = new DynamoDbReputationStore(client, tableName);
  suppressions = new DynamoDbSuppressionStore(client, tableName);
  const config = loadConfig({ TABLE_NAME: tableName, DYNAMODB_ENDPOINT: dynamo.endpoint, AWS_REGION: 'us-east-1' });
  deps = { ...createEventsDependencies(config, { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }, { enqueue: async (job) => void jobs.push(job) }), now: () => clock };
  close = () => client.destroy();
});
afterAll(async () => {
  close();
  await dynamo.close();
});

/** A message of a new Organization (with a webhook) to `destination`, and SES's records about it. */
async function message(destination: string[] = ['reader@example.org']) {
  const { id: organizationId } = await admin.createOrganization({ name: 'Org' });
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

    await one.open('2026-11-25T09:10:00.000Z');
    await one.click('2026-11-25T09:11:00.000Z');

    const stored = (await deps.deliveries.read([one.messageId])).get(one.messageId)!;
    expect(stored.recipients.map((r) => [r.address, r.status, r.at])).toEqual([['reader@example.org', 'Delivered', '2026-11-25T09:00:01.000Z']]);
    expect(await suppressions.list(one.organizationId)).toEqual([]);
    expect(await reputation.read(one.organizationId, clock)).toEqual(before);
    expect(jobs.map((job) => JSON.parse(job.payload).type)).not.toContain('email.delivered');
  });
});
