/**
 * Test mode (docs/keys.md): a test key's messages never reach Amazon SES. Each gets a message id
 * of its own form, `test-` and a UUID, which no SES message id has (SES's begin with hex digits),
 * so every later step (events, status, Activity, webhooks) knows a test message by its id alone,
 * with nothing more stored: its events never touch suppression lists or reputation, and every
 * answer about it says `"Test": true`.
 */
import { randomUUID } from 'node:crypto';

export const TEST_MESSAGE_ID_PREFIX = 'test-';

export function testMessageId(): string {
  return `${TEST_MESSAGE_ID_PREFIX}${randomUUID()}`;
}

export function isTestMessageId(messageId: string): boolean {
  return messageId.startsWith(TEST_MESSAGE_ID_PREFIX);
}

/** `{ Test: true }` for a test message, nothing for a live one: spread into what is shown of it. */
export function testMark(messageId: string): { readonly Test?: true } {
  return isTestMessageId(messageId) ? { Test: true } : {};
}
