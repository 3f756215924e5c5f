/**
 * Which opens a machine made (CONTRACT section 17 item 4; docs/tracking.md "Machine opens").
 *
 * Many opens are not a person reading: mail-privacy proxies fetch every image of every message
 * as it arrives, and security gateways fetch images and follow links to scan them. Counting those
 * would tell a sender that everybody read everything. An open is a machine's when either
 *
 * - it came within 2 seconds of the message's delivery (nobody opens, reads and renders a message
 *   that fast; a proxy prefetching on arrival does), or
 * - its user agent is one of the proxies and scanners listed below.
 *
 * A machine open is still recorded (and its webhook says `"Machine": true`) but is not counted in
 * `Opens` and never sets `FirstOpenedAt`. The list errs on the side of naming only agents that are
 * never a person's mail client: an unknown agent counts as a person.
 */

/** How soon after delivery an open cannot be a person's. */
export const MACHINE_OPEN_WINDOW_MS = 2_000;

interface MachineAgent {
  /** Shown in the docs. */
  readonly name: string;
  /** Tested against the whole `User-Agent`. */
  readonly pattern: RegExp;
}

/** The user agents of mail-privacy proxies and security scanners. docs/tracking.md lists the same. */
export const MACHINE_USER_AGENTS: readonly MachineAgent[] = [
  // Apple Mail Privacy Protection loads remote content through Apple's proxies with a bare
  // `Mozilla/5.0` and nothing after it; no browser or mail client sends that alone.
  { name: 'Apple Mail Privacy Protection', pattern: /^Mozilla\/5\.0$/ },
  // Gmail fetches (and caches) every image through its proxy: `… (via ggpht.com GoogleImageProxy)`.
  { name: 'Gmail image proxy', pattern: /GoogleImageProxy/i },
  // Yahoo Mail and AOL (one company's mail) proxy images the same way: `YahooMailProxy; https://help.yahoo.com/…`.
  { name: 'Yahoo Mail / AOL image proxy', pattern: /YahooMailProxy/i },
  // Outlook.com and Microsoft 365 build link and image previews with Bing's previewer.
  { name: 'Microsoft / Outlook link preview', pattern: /BingPreview/i },
  // Microsoft Office checks that a link exists before opening it (Safe Links and Office apps).
  { name: 'Microsoft Office link check', pattern: /Microsoft Office Existence Discovery/i },
  // Mimecast's URL Protect and attachment scanning.
  { name: 'Mimecast', pattern: /Mimecast/i },
  // Proofpoint URL Defense / Targeted Attack Protection.
  { name: 'Proofpoint', pattern: /Proofpoint/i },
  // Barracuda Email Security Gateway and Link Protection.
  { name: 'Barracuda', pattern: /Barracuda/i },
  // Cisco Secure Email (formerly IronPort) URL scanning.
  { name: 'Cisco IronPort', pattern: /IronPort/i },
  // Sophos Email's time-of-click URL scanning.
  { name: 'Sophos', pattern: /Sophos/i },
  // Trend Micro Email Security's URL scanning.
  { name: 'Trend Micro', pattern: /Trend ?Micro/i },
];

/** True when the user agent is a listed proxy or scanner. */
export function isMachineAgent(userAgent: string): boolean {
  const agent = userAgent.trim();
  return MACHINE_USER_AGENTS.some(({ pattern }) => pattern.test(agent));
}

/**
 * True when an open (or click) at `at` by `userAgent` is a machine's. `deliveredAt` are the times
 * the message was delivered to the recipients it may be attributed to; when none is recorded yet
 * (SES's events can arrive in any order), `sentAt` stands in: delivery follows the send, so an open
 * within 2 s of the send is within 2 s of the delivery too.
 */
export function isMachineOpen(open: { readonly at: string; readonly userAgent: string }, deliveredAt: readonly string[], sentAt: string | undefined): boolean {
  if (isMachineAgent(open.userAgent)) return true;
  const opened = Date.parse(open.at);
  const since = (deliveredAt.length > 0 ? deliveredAt : sentAt ? [sentAt] : []).map(Date.parse).filter(Number.isFinite);
  return since.some((time) => opened - time <= MACHINE_OPEN_WINDOW_MS);
}
