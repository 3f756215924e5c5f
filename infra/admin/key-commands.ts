/**
 * `key generate | rotate | show | revoke | sweep`: each user's one API key (CONTRACT section 3),
 * limited on request to some scopes, some senders and a lifetime, or made in test mode
 * (docs/keys.md). The rules themselves are the key store's and domain/key-policy.ts's, shared
 * with the settings page; this file only reads the options and prints.
 */
import type { Command } from 'commander';
import type { KeyPolicy } from '../../functions/shared/domain/key-policy';
import { KEY_SCOPES, KeyPolicyError, keepSchedulesRefusal, parseExpiresIn, parseScopes, parseSenders } from '../../functions/shared/domain/key-policy';
import type { KeyOptions } from '../../functions/shared/store/dynamodb-key-store';
import type { KeySummary } from '../../functions/shared/store/records';
import { hashApiKey } from '../../functions/shared/domain/api-keys';
import { noticeReport } from './cancelling';
import type { Leaf } from './command-frame';
import { retireSchedulesOf } from './schedule-commands';

type Options = Record<string, string | boolean | undefined>;

/** The limits and mode the options ask for; a bad value throws before anything is written. */
export function keyOptionsFrom(options: Options, now: number): KeyOptions {
  const text = (name: string) => (typeof options[name] === 'string' ? (options[name] as string) : undefined);
  const scopes = text('scopes');
  const senders = text('senders');
  const expiresIn = text('expiresIn');
  const policy: KeyPolicy = {
    ...(scopes !== undefined && { scopes: parseScopes(scopes) }),
    ...(senders !== undefined && { senders: parseSenders(senders) }),
    ...(expiresIn !== undefined && { expiresAt: parseExpiresIn(expiresIn, now) }),
  };
  const refusal = options.keepSchedules === true ? keepSchedulesRefusal(options.test === true, policy) : undefined;
  if (refusal) throw new KeyPolicyError(`--keep-schedules cannot go with ${options.test === true ? '--test' : `--scopes ${scopes ?? ''}`}: ${refusal}`);
  return { policy, test: options.test === true };
}

function limitsLine(summary: Pick<KeySummary, 'policy' | 'test' | 'lastUsedAt'>): string {
  const { policy } = summary;
  return [
    `scopes ${policy.scopes?.join(',') ?? 'all'}`,
    `senders ${policy.senders?.join(',') ?? "all of the Organization's"}`,
    policy.expiresAt ? `expires ${policy.expiresAt}` : 'never expires',
    `last used ${summary.lastUsedAt ?? 'never'}`,
    ...(summary.test ? ['test mode: nothing it sends reaches Amazon SES'] : []),
  ].join('; ');
}

function withLimitOptions(command: Command): Command {
  return command
    .option('--scopes <list>', `limit the key to these calls, comma-separated: ${KEY_SCOPES.join(', ')} (default: all)`)
    .option('--senders <list>', "limit the key to these sender domains and addresses, comma-separated (each one of the user's Organizations')")
    .option('--expires-in <duration>', 'the key stops working after this long: days (90d) or hours (12h)')
    .option('--test', 'a test-mode key (tme_test_…): authorised as a live one, but nothing it sends reaches Amazon SES');
}

export function addKeyCommands(program: Command, leaf: Leaf): void {
  const key = program.command('key').description("users' API keys (one per user, looked up by hash; this command line never shows a stored key)");
  withLimitOptions(
    leaf(key, 'generate', "create the user's key and print it once; refuses if one exists", async (store, o) => {
      const issued = await store.generateKey(o.user!, keyOptionsFrom(o, Date.now()));
      return { human: `API key for user ${issued.userId} (shown only this once, store it now): ${issued.key}`, json: { key: issued.key } };
    }).requiredOption('--user <uuid>', 'user id'),
  );
  withLimitOptions(
    leaf(key, 'rotate', "replace the user's key and print the new one once; the old one stops working, and so do the messages it scheduled", async (store, o, admin) => {
      // Before the key changes: a bad setting must refuse the command, not strand the old key's schedules.
      const cancelling = admin.cancelling();
      const issued = await store.rotateKey(o.user!, keyOptionsFrom(o, Date.now()));
      const keep = (o as { keepSchedules?: boolean }).keepSchedules === true;
      const moved = issued.replacedKeyHash ? await retireSchedulesOf(store, cancelling, issued.userId, issued.replacedKeyHash, keep ? hashApiKey(issued.key) : undefined) : { cancelled: 0, kept: 0 };
      const schedules = keep ? `${moved.kept} scheduled message(s) kept on the new key` : `${moved.cancelled} scheduled message(s) of the old key cancelled`;
      const notice = noticeReport(moved.cancelled, cancelling, admin.local);
      return {
        human: `New API key for user ${issued.userId}, the old one stops working within AUTH_CACHE_SECONDS; ${schedules} (shown only this once, store it now): ${issued.key}${notice.human}`,
        json: { key: issued.key, ...notice.json },
      };
    })
      .requiredOption('--user <uuid>', 'user id')
      .option('--keep-schedules', "keep the old key's scheduled messages, on the new key (without it they are cancelled)"),
  );
  leaf(key, 'show', "show the user's key masked (prefix and last four characters), its creation time, limits and last use (to the hour)", async (store, o) => {
    const summary = await store.showKey(o.user!);
    const { policy } = summary;
    return {
      human: `User ${summary.userId} has key ${summary.masked}, created ${summary.createdAt}; ${limitsLine(summary)}`,
      json: {
        userId: summary.userId,
        masked: summary.masked,
        createdAt: summary.createdAt,
        scopes: policy.scopes ?? null,
        senders: policy.senders ?? null,
        expiresAt: policy.expiresAt ?? null,
        lastUsedAt: summary.lastUsedAt ?? null,
        test: summary.test,
      },
    };
  }).requiredOption('--user <uuid>', 'user id');
  leaf(key, 'revoke', "remove the user's key; it stops working, and the messages it scheduled are cancelled", async (store, o, admin) => {
    const userId = o.user!.toLowerCase();
    const cancelling = admin.cancelling();
    const { cancelled } = await retireSchedulesOf(store, cancelling, userId, await store.revokeKey(userId));
    const notice = noticeReport(cancelled, cancelling, admin.local);
    return { human: `The key of user ${userId} is revoked; ${cancelled} scheduled message(s) it made are cancelled${notice.human}`, json: { userId, revoked: true, cancelledSchedules: cancelled, ...notice.json } };
  }).requiredOption('--user <uuid>', 'user id');
  leaf(key, 'sweep', 'remove key items no user holds any more (left by an interrupted key change); they never authenticate, this tidies them away', async (store) => {
    const removed = await store.sweepKeys();
    return { human: `Removed ${removed} key item${removed === 1 ? '' : 's'} no user holds`, json: { removed } };
  });
}
