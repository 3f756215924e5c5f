/**
 * Sender identities: what an Organization may send from. One definition of the stored form,
 * used by the admin store when it writes one and by the send function when it checks a From
 * address against the stored set, so the two cannot drift apart.
 *
 * Stored form: a lower-case ASCII (Punycode) domain, or an address as its mailbox (`mailboxOf`:
 * lower case, a quoted local part that needs no quotes unquoted).
 */
import type { EmailAddress } from './email-address';
import { mailboxOf, parseEmailAddress, toAsciiDomain } from './email-address';

export type SenderIdentity = { readonly domain: string } | { readonly address: string };

/** The stored form of an identity, or undefined when it is not a domain / an address. */
export function storedSenderIdentity(identity: SenderIdentity): string | undefined {
  if ('domain' in identity) return toAsciiDomain(identity.domain) || undefined;
  const address = parseEmailAddress(identity.address);
  return address && mailboxOf(address.ascii);
}

/** True when `from` is covered by one of the stored identities: its domain, or the exact address. */
export function isAllowedSender(from: EmailAddress, stored: ReadonlySet<string>): boolean {
  return stored.has(from.domain) || stored.has(mailboxOf(from.ascii));
}
