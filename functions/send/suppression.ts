/**
 * The Organization's suppression list applied to a request (CONTRACT section 10): suppressed
 * recipients are dropped from each message; a message with none left is not sent and is
 * `Failed: Suppressed`. Either way its result names them. An Organization whose count is 0 (the
 * common case) costs nothing here: the count came with the Organization item the request read
 * anyway, and no other read is made.
 */
import { mailboxOf } from '../shared/domain/email-address';
import type { OrganizationAccess, SuppressionList } from '../shared/store/ports';
import { withStorageFaults } from '../shared/store/storage-errors';
import type { MessageResult } from './sending';
import { failed, withSuppressed } from './sending';
import type { ValidMessage } from '../shared/mail/valid-message';

export interface Suppressed {
  /** Messages that still have recipients, with the suppressed ones removed and listed in `suppressed`. */
  readonly sendable: readonly ValidMessage[];
  /** Results of the messages that had no recipient left. */
  readonly results: ReadonlyMap<number, MessageResult>;
}

export async function applySuppressions(messages: readonly ValidMessage[], organization: OrganizationAccess, list: SuppressionList): Promise<Suppressed> {
  if (organization.suppressions <= 0) return { sendable: messages, results: new Map() };
  const addresses = messages.flatMap((message) => [...message.to, ...message.cc, ...message.bcc]);
  const suppressed = await withStorageFaults(() => list.suppressed(organization.organizationId, addresses));
  if (suppressed.size === 0) return { sendable: messages, results: new Map() };

  const sendable: ValidMessage[] = [];
  const results = new Map<number, MessageResult>();
  for (const message of messages) {
    const dropped: string[] = [];
    const keep = (list: readonly string[]) => list.filter((address) => !(suppressed.has(mailboxOf(address)) && dropped.push(address)));
    const [to, cc, bcc] = [keep(message.to), keep(message.cc), keep(message.bcc)];
    if (dropped.length === 0) sendable.push(message);
    else if (to.length + cc.length + bcc.length === 0) results.set(message.index, withSuppressed(failed(message.index, 'Suppressed'), dropped));
    else sendable.push({ ...message, to, cc, bcc, suppressed: dropped });
  }
  return { sendable, results };
}
