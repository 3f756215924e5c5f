/**
 * Email addresses as the service accepts them: a practical RFC 5322 addr-spec (no display name,
 * no comments), at most 254 characters, ASCII local part, and a domain that may be
 * internationalised but always leaves the service as Punycode (Amazon SES takes nothing else).
 */
import { domainToASCII } from 'node:url';
import isEmail from 'validator/lib/isEmail.js';
import isFQDN from 'validator/lib/isFQDN.js';
import { CONTROL_CHARACTERS } from './header-safety';
import { asciiLowerCase, isWellFormedText } from './unicode';

export const MAX_ADDRESS_LENGTH = 254;

export interface EmailAddress {
  /** The address as it goes to SES: local part unchanged, domain in lower-case ASCII. */
  readonly ascii: string;
  readonly localPart: string;
  /** Lower-case ASCII (Punycode) domain. */
  readonly domain: string;
}

const ADDRESS_RULES = {
  allow_display_name: false,
  allow_utf8_local_part: false,
  require_tld: true,
  allow_ip_domain: false,
  ignore_max_length: false,
} as const;

// A quoted local part holding any of these could pass for another address
// ("ceo@victim.com"@acme.test); sender identities are account-wide in SES, so this check is
// the only wall between tenants. Other quoted local parts are valid RFC 5322 and still accepted.
const MISLEADING_IN_QUOTES = /[@<>,]/;

// validator reads a lone `"` as a quoted local part, and lets Unicode white space (U+00A0,
// U+3000 …) into quotes; neither is the ASCII local part the contract promises and SES takes.
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** Parses an address, or returns undefined when it is not one the service will send to. */
export function parseEmailAddress(input: string): EmailAddress | undefined {
  // validator lets white space into a quoted local part; CR/LF there would reach the headers
  // SES writes, so no control character (and no white space but the plain space) gets through.
  // A lone surrogate would make the IDN conversion throw: it is simply not an address.
  if (input.length > MAX_ADDRESS_LENGTH || !isWellFormedText(input) || CONTROL_CHARACTERS.test(input) || !isEmail(input, ADDRESS_RULES)) return undefined;
  const at = input.lastIndexOf('@');
  const localPart = input.slice(0, at);
  if (localPart === '"' || !PRINTABLE_ASCII.test(localPart)) return undefined;
  if (localPart.startsWith('"') && MISLEADING_IN_QUOTES.test(localPart)) return undefined;
  const domain = toAsciiDomain(input.slice(at + 1));
  if (domain === undefined) return undefined;
  const ascii = `${localPart}@${domain}`;
  if (ascii.length > MAX_ADDRESS_LENGTH) return undefined;
  return { ascii, localPart, domain };
}

/** A domain name in lower-case ASCII (Punycode for IDNs), or undefined when it is not one. */
export function toAsciiDomain(input: string): string | undefined {
  const ascii = domainToASCII(input.trim());
  if (ascii === '' || !isFQDN(ascii, { require_tld: true, allow_underscores: false })) return undefined;
  return ascii.toLowerCase();
}

/** RFC 5322 dot-atom: what a local part may be without quotes. */
const DOT_ATOM = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/**
 * The mailbox an address names, as every per-address rule compares it (CONTRACT section 12):
 * `"bob"@example.com`, `"b\ob"@example.com` and `Bob@Example.com` are one mailbox,
 * `bob@example.com`. A quoted local part has its quoted pairs resolved and loses its quotes when
 * it needs none; one that needs them keeps them, escaping only `"` and `\`. Then ASCII lower case
 * (as the service has always compared addresses), the domain in Punycode. Without this, the
 * suppression list could be stepped around by spelling a suppressed address another way
 * (security audit round 3, finding 3).
 */
export function mailboxOf(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return asciiLowerCase(address);
  let local = address.slice(0, at);
  if (local.length >= 2 && local.startsWith('"') && local.endsWith('"')) {
    const unquoted = local.slice(1, -1).replace(/\\(.)/g, '$1');
    local = DOT_ATOM.test(unquoted) ? unquoted : `"${unquoted.replace(/["\\]/g, '\\$&')}"`;
  }
  const domain = address.slice(at + 1);
  return `${asciiLowerCase(local)}@${toAsciiDomain(domain) ?? asciiLowerCase(domain)}`;
}
