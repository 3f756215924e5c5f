/**
 * What one API key may do (docs/keys.md): which calls (scopes), from which senders, until when.
 * The operator sets it with `key generate` / `key rotate`, a user for their own key on the
 * settings page; it is stored beside the key's hash and read with it, and checked here, so the
 * admin command line, the settings API and every API-key function apply the same rules.
 *
 * No scopes, no senders, no expiry: the key may do everything its user may, as keys always could.
 */
import type { EmailAddress } from './email-address';
import type { SenderIdentity } from './sender-identity';
import { isAllowedSender, storedSenderIdentity } from './sender-identity';

/** The calls a key may be limited to; each API-key endpoint needs one. */
export const KEY_SCOPES = ['send', 'status', 'cancel', 'templates'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

export interface KeyPolicy {
  /** Absent: every scope. */
  readonly scopes?: readonly KeyScope[];
  /** Absent: every sender identity of the Organization. Each in the stored form of sender-identity.ts. */
  readonly senders?: readonly string[];
  /** ISO 8601 instant after which the key no longer authenticates; absent: never. */
  readonly expiresAt?: string;
}

/** A scope, sender list or expiry that cannot be used; the message names the value and the rule. */
export class KeyPolicyError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'KeyPolicyError';
  }
}

/** The longest life a key can be given: ten years. */
export const MAX_EXPIRY_DAYS = 3650;
const DURATION = /^([0-9]{1,7})([dh])$/;
const UNIT_MS = { d: 86_400_000, h: 3_600_000 } as const;

/** How the refusal names the list as it was given: the CLI's comma-separated text, or the settings API's JSON array. */
const listOf = (list: string | readonly string[], oneOrMore: string) => (typeof list === 'string' ? 'be a comma-separated list of' : `be a list of ${oneOrMore}`);
const entries = (list: string | readonly string[]): string[] => (typeof list === 'string' ? list.split(',') : [...list]).map((entry) => String(entry).trim());

/** `send,status` (or a list of names): the scopes, each once; unknown names and an empty list are refused. */
export function parseScopes(list: string | readonly string[]): KeyScope[] {
  const names = entries(list);
  if (names.length === 0 || names.some((name) => name === '')) throw new KeyPolicyError(`scopes must ${listOf(list, 'one or more of')} ${KEY_SCOPES.join(', ')} with no empty entry`);
  const unknown = names.filter((name) => !(KEY_SCOPES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new KeyPolicyError(`unknown scope${unknown.length === 1 ? '' : 's'} ${unknown.map((name) => `"${name}"`).join(', ')}; the scopes are ${KEY_SCOPES.join(', ')}`);
  return KEY_SCOPES.filter((scope) => names.includes(scope));
}

/** `example.com,billing@example.org` (or a list): domains and exact addresses in their stored form, each once. */
export function parseSenders(list: string | readonly string[]): string[] {
  const given = entries(list);
  if (given.length === 0 || given.some((entry) => entry === '')) throw new KeyPolicyError(`senders must ${listOf(list, 'one or more')} domains and addresses with no empty entry`);
  const stored = given.map((entry) => {
    const identity: SenderIdentity = entry.includes('@') ? { address: entry } : { domain: entry };
    const form = storedSenderIdentity(identity);
    if (!form) throw new KeyPolicyError(`"${entry}" is not ${'address' in identity ? 'a valid email address' : 'a domain name'}`);
    return form;
  });
  return [...new Set(stored)];
}

/** `90d` or `12h` from `now`: the expiry instant. Zero, negative or longer than ten years is refused. */
export function parseExpiresIn(text: string, now: number): string {
  const match = DURATION.exec(text.trim());
  const amount = Number(match?.[1] ?? 0);
  const unit = match?.[2] as keyof typeof UNIT_MS | undefined;
  if (!unit || amount <= 0) throw new KeyPolicyError(`"${text}" is not a positive duration such as 90d (days) or 12h (hours)`);
  const ms = amount * UNIT_MS[unit];
  if (ms > MAX_EXPIRY_DAYS * UNIT_MS.d) throw new KeyPolicyError(`"${text}" is longer than ${MAX_EXPIRY_DAYS} days`);
  return new Date(now + ms).toISOString();
}

/**
 * The senders of a key's list that none of its user's Organizations may use: a domain must be one
 * of an Organization's domains, an address one its identities allow.
 */
export function sendersOutside(senders: readonly string[], identities: readonly ReadonlySet<string>[]): string[] {
  return senders.filter((sender) => {
    const at = sender.lastIndexOf('@');
    const address = at > 0 ? ({ ascii: sender, domain: sender.slice(at + 1) } as EmailAddress) : undefined;
    return !identities.some((allowed) => (address ? isAllowedSender(address, allowed) : allowed.has(sender)));
  });
}

/**
 * Why a rotate cannot keep the old key's scheduled messages on the new key, or undefined when it
 * can: they are live mail the new key will be sending at their time.
 */
export function keepSchedulesRefusal(test: boolean, policy: KeyPolicy): string | undefined {
  if (test) return "the old key's scheduled messages are live mail, and a test key sends none";
  if (!allowsScope(policy, 'send')) return "the new key would send the old key's scheduled messages at their time, and it lacks the send scope";
  return undefined;
}

export function allowsScope(policy: KeyPolicy, scope: KeyScope): boolean {
  return policy.scopes === undefined || policy.scopes.includes(scope);
}

export function allowsSender(policy: KeyPolicy, from: EmailAddress): boolean {
  return policy.senders === undefined || isAllowedSender(from, new Set(policy.senders));
}

export function isExpired(policy: KeyPolicy, now: number): boolean {
  return policy.expiresAt !== undefined && Date.parse(policy.expiresAt) <= now;
}

/** The policy as read from storage: anything not of the right shape is left out (never widened by a bad value). */
export function readKeyPolicy(item: { readonly keyScopes?: unknown; readonly keySenders?: unknown; readonly keyExpiresAt?: unknown }): KeyPolicy {
  const list = (value: unknown): string[] | undefined => (Array.isArray(value) ? value.map(String) : value instanceof Set ? [...(value as Set<string>)].map(String).sort() : undefined);
  // A value of the wrong type narrows to nothing rather than falling back to "everything".
  const scopes = item.keyScopes === undefined ? undefined : (list(item.keyScopes) ?? []);
  const senders = item.keySenders === undefined ? undefined : (list(item.keySenders) ?? []);
  return {
    ...(scopes && { scopes: KEY_SCOPES.filter((scope) => scopes.includes(scope)) }),
    ...(senders && { senders }),
    ...(typeof item.keyExpiresAt === 'string' && { expiresAt: item.keyExpiresAt }),
  };
}
