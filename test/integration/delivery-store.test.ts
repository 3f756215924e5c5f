/**
 * The delivery records and the suppression list against dynalite: the conditional writes keep
 * the rule of recipient-state.ts whatever the order and repetition of events, and the
 * suppression count never falls below the list.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import type { DeliveryEvent } from '../../functions/shared/delivery/ses-event';
import { parseSesEvent } from '../../functions/shared/delivery/ses-event';
import { supersedes } from '../../functions/shared/delivery/recipient-state';
import type { RecipientState } from '../../functions/shared/delivery/recipient-state';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { DynamoDbDeliveryStore } from '../../functions/shared/store/dynamodb-delivery-store';
import { DynamoDbSuppressionStore } from '../../functions/shared/store/dynamodb-suppression-store';
import { DynamoDbAccessStore } from '../../functions/shared/store/dynamodb-access-store';
import { DynamoDbAdminStore } from '../../infra/admin/admin-store';
import type { RunningService } from '../../infra/local/emulators';
import { ensureTable, startDynamoDb } from '../../infra/local/emulators';
import { FIXTURE_ORG, RECORDS, eventBridge, variant } from '../support/ses-fixtures';

let dynamo: RunningService;
let deliveries: DynamoDbDeliveryStore;
let suppressions: DynamoDbSuppressionStore;
let admin: DynamoDbAdminStore;
let access: DynamoDbAccessStore;
let close: () => void;

beforeAll(async () => {
  dynamo = await startDynamoDb();
  const tableName = `delivery-${randomUUID()}`;
  await ensureTable(new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint }), tableName);
  const client = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: dynamo.endpoint });
  deliveries = new DynamoDbDeliveryStore(client, tableName);
  suppressions = new DynamoDbSuppressionStore(client, tableName);
  admin = new DynamoDbAdminStore(client, tableName);
  access = new DynamoDbAccessStore(client, tableName);
  close = () => client.destroy();
});
afterAll(async () => {
  close();
  await dynamo.close();
});

const RECIPIENTS = ['a@example.org', 'b@example.org'];

/** The fixture records about one message to two recipients, at times shifted by `shift` ms. */
function eventsFor(messageId: string): DeliveryEvent[] {
  const at = (base: string, shift: number) => new Date(Date.parse(base) + shift).toISOString();
  const records = [
    RECORDS.Send!,
    RECORDS.Delivery!,
    variant(RECORDS.Delivery!, (r) => (r.delivery.timestamp = at(r.delivery.timestamp, 50))),
    RECORDS.DeliveryDelay!,
    variant(RECORDS.DeliveryDelay!, (r) => (r.deliveryDelay.timestamp = at(r.deliveryDelay.timestamp, 10))),
    RECORDS.Bounce!,
    RECORDS.Complaint!,
  ];
  return records.flatMap((record, i) =>
    RECIPIENTS.filter((_, r) => i < 3 || (i + r) % 2 === 0).map((address) =>
      parseSesEvent(
        eventBridge(
          variant(record, (copy) => {
            copy.mail.messageId = messageId;
            copy.mail.destination = RECIPIENTS;
            for (const list of [copy.delivery?.recipients, copy.bounce?.bouncedRecipients, copy.complaint?.complainedRecipients, copy.deliveryDelay?.delayedRecipients]) {
              if (list) list.splice(0, list.length, ...(copy.delivery ? [address] : [{ emailAddress: address }]));
            }
          }),
        ),
      )!,
    ),
  );
}

/** What the order says each recipient must end in: the greatest state of all the events. */
function expected(events: DeliveryEvent[]): Map<string, RecipientState> {
  const final = new Map<string, RecipientState>();
  for (const event of events) for (const r of event.recipients) if (supersedes(r, final.get(r.address))) final.set(r.address, { status: r.status, at: r.at, detail: r.detail, eventId: r.eventId });
  return final;
}

describe('DynamoDbDeliveryStore', () => {
  it('ends in the same recorded state for any order of the events, each delivered one to three times (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 }), fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 20, maxLength: 20 }), async (seed, copies) => {
        const messageId = `m-${randomUUID()}`;
        const events = eventsFor(messageId);
        const deliveriesInOrder = events.flatMap((event, i) => Array.from({ length: copies[i % copies.length]! }, () => event));
        const shuffled = fc.sample(fc.shuffledSubarray(deliveriesInOrder, { minLength: deliveriesInOrder.length, maxLength: deliveriesInOrder.length }), { seed, numRuns: 1 })[0]!;
        // Concurrently in pairs, as two function instances would.
        for (let i = 0; i < shuffled.length; i += 2) await Promise.all(shuffled.slice(i, i + 2).map((event) => deliveries.record(event, 2_000_000_000)));
        const stored = (await deliveries.read([messageId])).get(messageId)!;
        expect(stored.organizationId).toBe(FIXTURE_ORG);
        const byAddress = Object.fromEntries(stored.recipients.map(({ address, ...s }) => [address, s]));
        expect(byAddress).toEqual(Object.fromEntries(expected(events)));
      }),
      { numRuns: 15 },
    );
  });

  it('reports the recipients an event moved, nothing for a late one, and the same recipients again for a repeat of the recorded event', async () => {
    const events = eventsFor(`m-${randomUUID()}`);
    const find = (type: string, address: string) => events.find((e) => e.type === type && e.recipients.some((r) => r.address === address))!;
    const [send, deliveryA, bounceB] = [find('Send', 'a@example.org'), find('Delivery', 'a@example.org'), find('Bounce', 'b@example.org')];
    expect((await deliveries.record(deliveryA!, 1)).map((r) => r.address)).toEqual(['a@example.org']);
    // The send came late: b has nothing yet and moves to Sent; a is already Delivered.
    expect((await deliveries.record(send!, 1)).map((r) => r.address)).toEqual(['b@example.org']);
    expect((await deliveries.record(bounceB!, 1)).map((r) => r.address)).toEqual(['b@example.org']);
    // A redelivery of the recorded event (a crash after the write): handed on again, state unchanged.
    expect((await deliveries.record(bounceB!, 1)).map((r) => r.address)).toEqual(['b@example.org']);
    // A late event whose state was overtaken is no news for anyone.
    expect(await deliveries.record(send!, 1)).toEqual([]);
  });

  it("keeps the message's tags from the first event recorded, and reads {} for a message without", async () => {
    const [tagged, plain] = [`m-${randomUUID()}`, `m-${randomUUID()}`];
    const [send, delivery] = eventsFor(tagged).filter((e) => e.type === 'Send' || e.type === 'Delivery');
    await deliveries.record({ ...delivery!, tags: { invoice: 'inv-42' } }, 1);
    await deliveries.record({ ...send!, tags: { invoice: 'changed' } }, 1);
    await deliveries.record(eventsFor(plain)[0]!, 1);
    const read = await deliveries.read([tagged, plain]);
    expect(read.get(tagged)!.tags).toEqual({ invoice: 'inv-42' });
    expect(read.get(plain)!.tags).toEqual({});
  });

  it('never records an event onto another Organization\'s message', async () => {
    const messageId = `m-${randomUUID()}`;
    const [send] = eventsFor(messageId);
    await deliveries.record(send!, 1);
    const intruder = { ...send!, organizationId: '00000000-0000-4000-8000-000000000000', id: 'other' };
    await expect(deliveries.record({ ...intruder, recipients: intruder.recipients.map((r) => ({ ...r, eventId: 'zzz' })) }, 1)).resolves.toEqual([]);
    expect((await deliveries.read([messageId])).get(messageId)!.organizationId).toBe(FIXTURE_ORG);
  });
});

describe('DynamoDbSuppressionStore', () => {
  it('adds each address once, counts them on the Organization item, and removes them', async () => {
    const org = (await admin.createOrganization({ name: 'Suppressing' })).id;
    const at = '2026-01-01T00:00:00.000Z';
    await suppressions.add(org, [{ address: 'X@Example.org', reason: 'Bounce', at }, { address: 'x@example.org', reason: 'Complaint', at }, { address: 'y@example.org', reason: 'Complaint', at }]);
    expect(await suppressions.list(org)).toEqual([{ address: 'x@example.org', reason: 'Bounce', at }, { address: 'y@example.org', reason: 'Complaint', at }]);
    expect((await access.lookup(undefined, org)).organization?.suppressions).toBe(2);
    expect([...(await suppressions.suppressed(org, ['X@EXAMPLE.ORG', 'z@example.org']))]).toEqual(['x@example.org']);
    expect(await suppressions.remove(org, 'x@example.org')).toBe(true);
    expect(await suppressions.remove(org, 'x@example.org')).toBe(false);
    expect((await access.lookup(undefined, org)).organization?.suppressions).toBe(1);
  });

  it('adds nothing for an Organization that does not exist (and creates no item for it)', async () => {
    const ghost = randomUUID();
    expect(await suppressions.add(ghost, [{ address: 'x@example.org', reason: 'Bounce', at: '2026-01-01T00:00:00.000Z' }])).toBe(false);
    expect(await suppressions.list(ghost)).toEqual([]);
    expect((await access.lookup(undefined, ghost)).organization).toBeUndefined();
  });
});
