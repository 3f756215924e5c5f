/**
 * Scheduled messages in the table (CONTRACT section 13): one head item per schedule
 * (`SCHED#<id>` / `SCHED`) with its state, and the message itself (message-codec.ts) inline when
 * it fits an item, else in `PART#nnnn` items of the same partition, written before the head so a
 * head never names parts that are not there. One Query reads a schedule whole.
 *
 * Why the table and not S3 for large bodies: the schedule's state and body then live and die
 * together (one TTL, one IAM partition, no bucket policy, lifecycle rule or orphaned object), and
 * the local stack keeps them in dynalite exactly as AWS keeps them in DynamoDB, so the same code is
 * tested. The price is DynamoDB's per-KB write cost on large bodies (docs/scheduled-send.md).
 *
 * A schedule moves through these states, each move a conditional write:
 *
 *   Scheduled ──claim──> Claimed ──inFlight──> InFlight ──finish──> Sent | Expired | Failed
 *       ^  │                │  └──finish──> Expired | Failed          │
 *       │  └─cancel─> Cancelled                                       │
 *       └──────────── retry (throttled: wait for the budget) <────────┘ (unless handed to SES)
 *
 * `Claimed` carries a lease: a firing that died before handing the message to SES is taken over
 * once the lease lapses. `InFlight` means it was (or was being) handed to SES: a firing that died
 * then is never sent again; it ends `Failed: OutcomeUnknown`, as an idempotent request does.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BatchWriteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { StorageUnavailableProblem } from '../http/problems';
import { batchGetAll } from '../store/batch-get';
import { unlessConditionFails } from '../store/conditions';
import { queryAll, scanAll } from '../store/query-all';
import { SCHEDULE_PARTITION, itemKey, schedulePartition } from '../store/table';
import type { TemplateReference } from '../templates/template-rules';
import { readTemplateReference } from '../templates/template-rules';
import type { ValidMessage } from '../mail/valid-message';
import { decodeMessage, encodeMessage, splitBody } from './message-codec';
import { OrganizationSchedules } from './organization-schedules';
import type { Finish, NewSchedule, ScheduleError, ScheduleHead, ScheduleState, ScheduleStore } from './schedule-model';
import { FINAL_STATES, SCHEDULE_STATES, ScheduleStateError } from './schedule-model';

export * from './schedule-model';

type Item = Record<string, unknown>;
const HEAD_FIELDS = ['pk', 'organizationId', 'userId', '#state', 'sendAt', 'dueAt', 'attempts', 'claimId', 'leaseUntil', 'messageId', '#error', 'suppressed', 'updatedAt', 'tags', 'keyHash', 'test', 'template', 'noticeOwed'];
const NAMES = { '#state': 'state', '#error': 'error' };
/** BatchWriteItem takes at most 25 items. */
const BATCH_WRITE = 25;

function toHead(item: Item): ScheduleHead | undefined {
  if (!(SCHEDULE_STATES as readonly unknown[]).includes(item.state) || typeof item.pk !== 'string') return undefined;
  return {
    scheduleId: item.pk.slice(SCHEDULE_PARTITION.length),
    organizationId: String(item.organizationId),
    userId: String(item.userId),
    state: item.state as ScheduleState,
    sendAt: Number(item.sendAt),
    dueAt: Number(item.dueAt),
    attempts: Number(item.attempts ?? 0),
    ...(typeof item.claimId === 'string' && { claimId: item.claimId }),
    ...(typeof item.leaseUntil === 'number' && { leaseUntil: item.leaseUntil }),
    ...(typeof item.messageId === 'string' && { messageId: item.messageId }),
    ...(typeof item.error === 'object' && item.error !== null && { error: item.error as ScheduleError }),
    ...(Array.isArray(item.suppressed) && { suppressed: item.suppressed.map(String) }),
    updatedAt: String(item.updatedAt),
    ...(isTagMap(item.tags) && { tags: item.tags }),
    ...(typeof item.keyHash === 'string' && { keyHash: item.keyHash }),
    ...(item.test === true && { test: true as const }),
    ...withTemplate(readTemplateReference(item.template)),
    ...(item.noticeOwed === true && { noticeOwed: true as const }),
  };
}

const withTemplate = (template: TemplateReference | undefined) => (template ? { template } : {});

function isTagMap(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && Object.values(value).every((tag) => typeof tag === 'string');
}

export class DynamoDbScheduleStore implements ScheduleStore {
  /** Each Organization's pending schedules: their bound, and who made them (organization-schedules.ts). */
  readonly organizations: OrganizationSchedules;

  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {
    this.organizations = new OrganizationSchedules(client, tableName);
  }

  async create(schedule: NewSchedule): Promise<'created' | 'exists' | 'full'> {
    const { scheduleId, expiresAt, message } = schedule;
    // Its place under the Organization's bound first: a schedule is never written past it.
    const entry = { ...schedule, recipients: [...message.to, ...message.cc, ...message.bcc], subject: message.subject };
    if ((await this.organizations.hold(entry, schedule.pendingLimit, expiresAt)) === 'full') return 'full';
    const parts = splitBody(encodeMessage(schedule.message));
    if (parts.length > 1) {
      const items = parts.map((data, i) => ({ PutRequest: { Item: { ...itemKey.schedulePart(scheduleId, i), data, expiresAt } } }));
      for (let i = 0; i < items.length; i += BATCH_WRITE) await this.writeAll(items.slice(i, i + BATCH_WRITE));
    }
    const head = {
      ...itemKey.schedule(scheduleId),
      organizationId: schedule.organizationId,
      userId: schedule.userId,
      state: 'Scheduled',
      sendAt: schedule.sendAt,
      dueAt: schedule.sendAt,
      attempts: 0,
      parts: parts.length,
      ...(parts.length === 1 && { body: parts[0] }),
      updatedAt: new Date(schedule.now).toISOString(),
      ...(schedule.message.tags && Object.keys(schedule.message.tags).length > 0 && { tags: { ...schedule.message.tags } }),
      ...(schedule.keyHash && { keyHash: schedule.keyHash }),
      ...(schedule.test && { test: true }),
      ...withTemplate(schedule.message.template),
      expiresAt,
    };
    const created = await unlessConditionFails(() =>
      this.client.send(new PutCommand({ TableName: this.tableName, Item: head, ConditionExpression: 'attribute_not_exists(pk)' })),
    );
    return created ? 'created' : 'exists';
  }

  private async writeAll(requests: Item[]): Promise<void> {
    let pending = requests;
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 3) throw new StorageUnavailableProblem();
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt));
      const result = await this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending } }));
      pending = (result.UnprocessedItems?.[this.tableName] ?? []) as Item[];
    }
  }

  async remove(scheduleId: string): Promise<void> {
    const items = await this.partition(scheduleId, 'pk, sk, organizationId');
    for (let i = 0; i < items.length; i += BATCH_WRITE) {
      await this.writeAll(items.slice(i, i + BATCH_WRITE).map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })));
    }
    const head = items.find((item) => item.sk === 'SCHED');
    if (typeof head?.organizationId === 'string') await this.organizations.release(head.organizationId, scheduleId);
  }

  async load(scheduleId: string): Promise<{ head: ScheduleHead; message: ValidMessage | undefined } | undefined> {
    const items = await this.partition(scheduleId);
    const headItem = items.find((item) => item.sk === 'SCHED');
    const head = headItem && toHead(headItem);
    if (!headItem || !head) return undefined;
    if (FINAL_STATES.has(head.state)) return { head, message: undefined };
    const parts = Number(headItem.parts ?? 1);
    const chunks = parts === 1 ? [headItem.body as Uint8Array] : items.filter((item) => String(item.sk).startsWith('PART#')).map((item) => item.data as Uint8Array);
    if (chunks.length !== parts || chunks.some((chunk) => !(chunk instanceof Uint8Array))) throw new ScheduleStateError(`scheduled message ${scheduleId} is missing parts of its body`);
    return { head, message: decodeMessage(Buffer.concat(chunks)) };
  }

  /** Every item of the schedule's partition, in key order (the head sorts after its parts). */
  private partition(scheduleId: string, projection?: string): Promise<Item[]> {
    return queryAll(this.client, {
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': schedulePartition(scheduleId) },
      ConsistentRead: true,
      ...(projection && { ProjectionExpression: projection }),
    });
  }

  async heads(scheduleIds: readonly string[]): Promise<Map<string, ScheduleHead>> {
    const unique = [...new Set(scheduleIds.map((id) => id.toLowerCase()))];
    const found = new Map<string, ScheduleHead>();
    if (unique.length === 0) return found;
    const items = await batchGetAll(this.client, this.tableName, unique.map(itemKey.schedule), { projection: HEAD_FIELDS.join(', '), names: NAMES });
    for (const item of items) {
      const head = toHead(item);
      if (head) found.set(head.scheduleId, head);
    }
    return found;
  }

  private update(scheduleId: string, set: string, condition: string, values: Item, remove?: string): Promise<boolean> {
    return unlessConditionFails(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.schedule(scheduleId),
          UpdateExpression: `SET ${set}${remove ? ` REMOVE ${remove}` : ''}`,
          ConditionExpression: `attribute_exists(pk) AND ${condition}`,
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }

  claim(scheduleId: string, claimId: string, leaseUntil: number, now: number): Promise<boolean> {
    return this.update(
      scheduleId,
      '#state = :claimed, claimId = :claim, leaseUntil = :lease, attempts = attempts + :one, updatedAt = :at',
      '(#state = :scheduled OR (#state = :claimed AND leaseUntil < :now))',
      { ':claimed': 'Claimed', ':scheduled': 'Scheduled', ':claim': claimId, ':lease': leaseUntil, ':now': now, ':one': 1, ':at': new Date(now).toISOString() },
    );
  }

  async inFlight(scheduleId: string, claimId: string, now: number): Promise<void> {
    const moved = await this.update(scheduleId, '#state = :inFlight, updatedAt = :at', '#state = :claimed AND claimId = :claim', {
      ':inFlight': 'InFlight',
      ':claimed': 'Claimed',
      ':claim': claimId,
      ':at': new Date(now).toISOString(),
    });
    if (!moved) throw new ScheduleStateError(`the claim on scheduled message ${scheduleId} was lost before sending`);
  }

  async finish(scheduleId: string, claimId: string | undefined, outcome: Finish, now: number): Promise<boolean> {
    const values: Item = { ':final': outcome.state, ':at': new Date(now).toISOString(), ':inFlight': 'InFlight' };
    const sets = ['#state = :final', 'updatedAt = :at'];
    if (outcome.state === 'Sent') {
      sets.push('messageId = :messageId');
      values[':messageId'] = outcome.messageId;
    }
    if (outcome.state === 'Failed') {
      sets.push('#error = :error');
      values[':error'] = outcome.error;
    }
    if (outcome.suppressed?.length) {
      sets.push('suppressed = :suppressed');
      values[':suppressed'] = outcome.suppressed;
    }
    // Without a claim: ending an InFlight whose firing died (its lease lapsed).
    const condition = claimId === undefined ? '#state = :inFlight AND leaseUntil < :now' : '(#state = :claimed OR #state = :inFlight) AND claimId = :claim';
    if (claimId === undefined) values[':now'] = now;
    else Object.assign(values, { ':claim': claimId, ':claimed': 'Claimed' });
    let before: Item | undefined;
    const finished = await unlessConditionFails(async () => {
      ({ Attributes: before } = await this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey.schedule(scheduleId),
          // The body is no longer needed once the schedule is final; parts go with the TTL.
          UpdateExpression: `SET ${sets.join(', ')} REMOVE body, leaseUntil`,
          ConditionExpression: `attribute_exists(pk) AND ${condition}`,
          ExpressionAttributeNames: { '#state': 'state', ...(outcome.state === 'Failed' && { '#error': 'error' }) },
          ExpressionAttributeValues: values,
          // Whose it was: its place under the Organization's bound is given back.
          ReturnValues: 'ALL_OLD',
        }),
      ));
    });
    if (finished && typeof before?.organizationId === 'string') await this.organizations.release(before.organizationId, scheduleId);
    return finished;
  }

  retry(scheduleId: string, claimId: string, dueAt: number, now: number, fromInFlight = true): Promise<boolean> {
    return this.update(
      scheduleId,
      '#state = :scheduled, dueAt = :due, updatedAt = :at',
      fromInFlight ? '(#state = :claimed OR #state = :inFlight) AND claimId = :claim' : '#state = :claimed AND claimId = :claim',
      {
        ':scheduled': 'Scheduled',
        ':claimed': 'Claimed',
        ...(fromInFlight && { ':inFlight': 'InFlight' }),
        ':claim': claimId,
        ':due': dueAt,
        ':at': new Date(now).toISOString(),
      },
      'claimId, leaseUntil',
    );
  }

  async cancel(scheduleId: string, organizationId: string, now: number, noticeOwed = false): Promise<boolean> {
    const owed = noticeOwed ? ', noticeOwed = :owed' : '';
    const values = { ':cancelled': 'Cancelled', ':scheduled': 'Scheduled', ':org': organizationId.toLowerCase(), ':at': new Date(now).toISOString(), ...(noticeOwed && { ':owed': true }) };
    const cancelled = await this.update(scheduleId, `#state = :cancelled, updatedAt = :at${owed}`, '#state = :scheduled AND organizationId = :org', values);
    if (cancelled) await this.organizations.release(organizationId, scheduleId);
    return cancelled;
  }

  settleNotice(scheduleId: string, now: number): Promise<boolean> {
    const values = { ':cancelled': 'Cancelled', ':owed': true, ':at': new Date(now).toISOString() };
    return this.update(scheduleId, 'updatedAt = :at', '#state = :cancelled AND noticeOwed = :owed', values, 'noticeOwed');
  }

  oweNotice(scheduleId: string, now: number): Promise<boolean> {
    return this.update(scheduleId, 'updatedAt = :at, noticeOwed = :owed', '#state = :cancelled', { ':cancelled': 'Cancelled', ':owed': true, ':at': new Date(now).toISOString() });
  }

  async pending(): Promise<{ scheduleId: string; dueAt: number }[]> {
    const items = await scanAll(this.client, {
      TableName: this.tableName,
      // A Cancelled one whose webhook is still owed too: its timer tells it (cancel in key-schedules.ts).
      FilterExpression: 'begins_with(pk, :prefix) AND sk = :head AND (#state IN (:scheduled, :claimed, :inFlight) OR (#state = :cancelled AND noticeOwed = :owed))',
      ProjectionExpression: 'pk, dueAt, leaseUntil, #state',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':prefix': SCHEDULE_PARTITION, ':head': 'SCHED', ':scheduled': 'Scheduled', ':claimed': 'Claimed', ':inFlight': 'InFlight', ':cancelled': 'Cancelled', ':owed': true },
    });
    return items.map((item) => {
      const dueAt = item.state === 'Scheduled' || item.state === 'Cancelled' ? Number(item.dueAt) : Number(item.leaseUntil ?? 0);
      return { scheduleId: String(item.pk).slice(SCHEDULE_PARTITION.length), dueAt };
    });
  }
}
