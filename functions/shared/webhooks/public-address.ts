/**
 * Which addresses a webhook may reach (security audit round 2, finding 3). A webhook URL is the
 * one place where a tenant makes the service send a request wherever it likes, so it must not
 * reach what only the service can reach: the instance metadata endpoint (169.254.169.254), the
 * VPC's private ranges, this machine. An address is public when ipaddr.js classifies it as
 * ordinary global `unicast`; every special range it knows (private, loopback, link-local,
 * carrier-grade NAT, unique local, multicast, reserved, the IPv6 forms that embed an IPv4
 * address such as IPv4-mapped, NAT64 and 6to4, …) is refused. IPv4-mapped addresses are judged
 * as the IPv4 address they carry.
 *
 * Odd IPv4 spellings (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) need no rule of their own:
 * the WHATWG URL parser (`new URL`) turns each into its dotted form before anything here sees it,
 * exactly as the HTTP client would connect to it.
 */
import ipaddr from 'ipaddr.js';

/** The range ipaddr.js puts an IP address in (`unicast` is the public one), or undefined for a name. */
export function addressRange(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.IPv4.isValidFourPartDecimal(bare) && !ipaddr.IPv6.isValid(bare)) return undefined;
  return ipaddr.process(bare).range();
}

export function isPublicAddress(address: string): boolean {
  return addressRange(address) === 'unicast';
}

export function isLoopbackAddress(address: string): boolean {
  return addressRange(address) === 'loopback';
}

/** Names that are this machine whatever DNS says (RFC 6761). */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}
