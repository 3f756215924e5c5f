/**
 * A pending scheduled message written straight into a table, as the send path stores it: its
 * head, and its entry in the Organization's list (`schedule list`). For the admin CLI's tests,
 * which cancel schedules without a send function to make them.
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { expect } from '@jest/globals';
import { DynamoDbScheduleStore } from '../../functions/shared/schedules/schedule-store';
import { itemKey } from '../../functions/shared/store/table';

export interface PendingSchedule {
  readonly organizationId: string;
  readonly userId: string;
  /** The hash of the key that made it (a schedule dies with its key). */
  readonly keyHash?: string;
  /** Epoch ms; an hour from now unless given. */
  readonly sendAt?: number;
}

/** Writes the schedule and answers its id. */
export async function writePendingSchedule(documents: DynamoDBDocumentClient, tableName: string, schedule: PendingSchedule): Promise<string> {
  const { organizationId, userId, keyHash } = schedule;
  const scheduleId = randomUUID();
  const sendAt = schedule.sendAt ?? Date.now() + 3_600_000;
  await documents.send(
    new PutCommand({
      TableName: tableName,
      Item: { ...itemKey.schedule(scheduleId), organizationId, userId, ...(keyHash && { keyHash }), state: 'Scheduled', sendAt, dueAt: sendAt, attempts: 0, updatedAt: new Date().toISOString() },
    }),
  );
  const entry = { scheduleId, organizationId, userId, ...(keyHash && { keyHash }), sendAt, recipients: ['a@example.org'], subject: 'Later' };
  expect(await new DynamoDbScheduleStore(documents, tableName).organizations.hold(entry, 100, Math.floor(sendAt / 1000) + 86_400)).toBe('held');
  return scheduleId;
}
