/**
 * `ReplyTo`, `Headers`, `Tags` and `Attachments` (CONTRACT section 12) are checked by
 * `message-content.ts`, with the attachment file-name rules behind it: code most sends never run,
 * so it is loaded only for a request that has one of those fields (`loadMessageContentFor`, before
 * validation), instead of at every cold start (docs/performance.md, "Cold start"). Validation then
 * calls it synchronously, through `validateMessageContent` here, which answers a message without
 * them itself.
 */
import type { Json, ProblemList } from '../shared/http/body-rules';
import { ownOf } from '../shared/http/body-rules';
import { loadedOnFirstUse } from '../shared/runtime/deferred';
import { loadContentTypesFor } from './content-types';
import type { MessageContent } from './message-content';

export const CONTENT_FIELDS = ['ReplyTo', 'Headers', 'Tags', 'Attachments'] as const;

const rules = loadedOnFirstUse(() => import('./message-content'));

/** Absent and null are the same: not given. */
const hasContentFields = (message: unknown): boolean => CONTENT_FIELDS.some((field) => (ownOf(message, field) ?? undefined) !== undefined);

/**
 * Loads what validating the body (not yet validated) takes: the section 12 rules if a message has
 * one of their fields, the extension table if an attachment names no type.
 */
export async function loadMessageContentFor(body: unknown): Promise<void> {
  const messages = ownOf(body, 'Messages');
  // Errs on the side of loading: a message that is no object is refused before its content is read.
  if (rules.loaded() === undefined && Array.isArray(messages) && messages.some(hasContentFields)) await loadMessageContent();
  await loadContentTypesFor(body);
}

export async function loadMessageContent(): Promise<void> {
  await rules.load();
}

/**
 * The section 12 fields of one message (`base` is its pointer), empty for a message with none;
 * the rules must have been loaded for this request if it has any.
 */
export function validateMessageContent(message: Json, base: string, problems: ProblemList): MessageContent {
  if (!hasContentFields(message)) return {};
  const loaded = rules.loaded();
  if (loaded === undefined) throw new Error('the section 12 rules are not loaded: call loadMessageContentFor(body) before validating it');
  return loaded.validateMessageContent(message, base, problems);
}
