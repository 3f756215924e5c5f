/**
 * Amazon SES's open and click tracking, played by the local SES front (CONTRACT section 17, item
 * 5). A SendEmail through a tracked configuration set (functions/shared/mail/tracking.ts names
 * them; nothing else decides) has its `Simple` HTML rewritten as SES would (tracking-rewrite.ts)
 * before the emulator stores it, so the mail viewer shows the message as a recipient gets it.
 * The tracking endpoint is served by the same front, on the viewer's origin:
 *
 * - `GET /track/open/<ref>/<sig>`: the pixel; records an Open and answers a 1x1 GIF;
 * - `GET /track/click/<ref>/<sig>/<n>.<token>`: the n-th link; records a Click and answers 302 to
 *   the link's original URL.
 *
 * `HEAD` gets the same answer without a body and records nothing: it is how link checkers and
 * mail scanners probe a URL, and nobody opened or followed anything.
 *
 * `<ref>` is a random reference drawn for the message, `<sig>` its HMAC-SHA256 under a key drawn
 * at each start; each link has a random 64-bit `<token>` of its own (one HMAC per link would cost
 * a 300-link newsletter a millisecond; random bytes drawn 64 links at a time cost next to
 * nothing). Both are compared in constant time. A URL whose signature or token does not match, or
 * whose reference this front does not know (another start's, or one of the oldest past the last
 * 10,000 tracked messages), is answered 404 with no `Location`: the endpoint redirects only to
 * URLs that were in a message it sent, so it is no open redirect, and a link's number cannot be
 * changed to reach another. Nor can a URL be written another way and still count: a number with a
 * leading zero, or any query, answers 404 too. The original URLs are kept here, never in the URL, so nobody can
 * learn or alter them from outside.
 *
 * Each recorded Open and Click is the event SES publishes (functions/shared/delivery/
 * mailbox-simulator.ts builds it), with the request's User-Agent and address, handed at once to
 * the same local events queue as the mailbox simulator's. As with the simulator, only the
 * service's own sends produce events (ses-rate-gate.ts says why); anyone else's tracked mail is
 * rewritten and redirected all the same.
 *
 * `Raw` content (the rare message whose headers `Simple` cannot carry) has its HTML part rewritten
 * the same way (tracking-mime.ts).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { engagementEvent } from '../../functions/shared/delivery/mailbox-simulator';
import type { Engagement, SimulatedSend } from '../../functions/shared/delivery/mailbox-simulator';
import { isTracked, trackingOfConfigurationSet } from '../../functions/shared/mail/tracking';
import type { Tracking } from '../../functions/shared/mail/tracking';
import { simulatedSendOf } from './mailbox-simulator';
import { rewriteMimeHtml } from './tracking-mime';
import { rewriteHtml } from './tracking-rewrite';

const TRACKING_PATH = '/track/';
/** A transparent 1x1 GIF, the smallest image every mail client shows. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
/** Tracked messages remembered (then the oldest's URLs answer 404, as an unknown one does). */
const KEPT = 10_000;
/**
 * The configuration set key as the SDK writes it. Inside a JSON string every `"` is escaped, so
 * this can only be the key itself: an untracked send costs one search of its bytes, no parse.
 */
const SET_KEY = Buffer.from('"ConfigurationSetName":"');

function configurationSetIn(body: Buffer): string | undefined {
  const at = body.indexOf(SET_KEY);
  if (at === -1) return undefined;
  const end = body.indexOf(0x22, at + SET_KEY.length);
  return end === -1 ? undefined : body.toString('utf8', at + SET_KEY.length, end);
}

type Json = Record<string, any>;

export interface TrackerOptions {
  readonly region: string;
  /** The front's own origin (`http://127.0.0.1:<port>`), known once it listens. */
  readonly origin: () => string;
  /** Hands an EventBridge event to the events function's queue. */
  readonly publish: (event: Record<string, unknown>) => void;
  readonly now?: () => number;
}

/**
 * A tracked SendEmail, rewritten; `accepted` once the emulator has answered 200, with when
 * (`sentAt`, epoch ms): the time the mailbox simulator's events of the message carry too, so that
 * its Open and Click events name the same `mail.timestamp` as its Send and Delivery, as SES's do.
 */
export interface TrackedSend {
  readonly body: Buffer;
  readonly tracking: Tracking;
  accepted(answer: Buffer, ownSend: boolean, sentAt: number): void;
}

export interface Tracker {
  /** The request to pass on for this SendEmail body: undefined when it is not tracked (passed on as it is). */
  prepare(body: Buffer): TrackedSend | undefined;
  /** Answers a request for the tracking endpoint; false when the path is not the endpoint's. */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
}

interface Reference {
  readonly send: SimulatedSend;
  /** Each link's original URL and its token, by number. */
  readonly links: readonly string[];
  readonly tokens: readonly string[];
  readonly ownSend: boolean;
}

const TOKEN_BYTES = 8;
const TOKENS_AT_ONCE = 64;

/** Constant-time equality of two strings (of any lengths). */
function same(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function createTracker(options: TrackerOptions): Tracker {
  const key = randomBytes(32);
  const now = options.now ?? Date.now;
  const references = new Map<string, Reference>();
  const sign = (what: string) => createHmac('sha256', key).update(what).digest('base64url');

  const notFound = (res: ServerResponse) => {
    const body = 'Not a tracking link of this local stack.\n';
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
    res.end(body);
  };

  /** The message a path names, when its signature is this start's and the reference known. */
  const verified = (id: string, signature: string): Reference | undefined => (same(signature, sign(id)) ? references.get(id) : undefined);

  const engagement = (req: IncomingMessage) => ({
    ipAddress: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
    timestamp: new Date(now()).toISOString(),
    userAgent: req.headers['user-agent'] ?? '',
  });

  const record = (reference: Reference, what: Engagement) => {
    if (reference.ownSend) options.publish(engagementEvent(reference.send, what));
  };

  return {
    prepare(body) {
      if (!isTracked(trackingOfConfigurationSet(configurationSetIn(body)))) return undefined;
      let request: Json;
      try {
        request = JSON.parse(body.toString('utf8')) as Json;
      } catch {
        return undefined;
      }
      const tracking = trackingOfConfigurationSet(typeof request.ConfigurationSetName === 'string' ? request.ConfigurationSetName : undefined);
      const html = request.Content?.Simple?.Body?.Html;
      const raw = request.Content?.Raw;
      if (!isTracked(tracking) || (typeof html?.Data !== 'string' && typeof raw?.Data !== 'string')) return undefined;
      const id = randomBytes(16).toString('base64url');
      const signed = `${id}/${sign(id)}`;
      const origin = `${options.origin()}${TRACKING_PATH}`;
      const tokens: string[] = [];
      let pool = Buffer.alloc(0);
      let links: readonly string[] = [];
      const rewrite = (text: string) => {
        const rewritten = rewriteHtml(text, tracking, {
          open: `${origin}open/${signed}`,
          click: (index) => {
            const at = (index % TOKENS_AT_ONCE) * TOKEN_BYTES;
            if (at === 0) pool = randomBytes(TOKENS_AT_ONCE * TOKEN_BYTES);
            tokens[index] = pool.toString('base64url', at, at + TOKEN_BYTES);
            return `${origin}click/${signed}/${index}.${tokens[index]}`;
          },
        });
        links = rewritten.links;
        return rewritten.html;
      };
      if (typeof html?.Data === 'string') html.Data = rewrite(html.Data);
      else {
        // MIME is bytes: latin1 keeps each one as one character, whatever the parts' charsets.
        const mime = rewriteMimeHtml(Buffer.from(String(raw.Data), 'base64').toString('latin1'), rewrite);
        if (mime === undefined) return undefined;
        raw.Data = Buffer.from(mime, 'latin1').toString('base64');
      }
      return {
        body: Buffer.from(JSON.stringify(request)),
        tracking,
        accepted(answer, ownSend, sentAt) {
          let messageId: unknown;
          try {
            messageId = (JSON.parse(answer.toString('utf8')) as Json).MessageId;
          } catch {
            return;
          }
          if (typeof messageId !== 'string') return;
          references.set(id, { send: simulatedSendOf(request, messageId, options.region, sentAt), links, tokens, ownSend });
          if (references.size > KEPT) references.delete(references.keys().next().value as string);
        },
      };
    },

    serve(req, res) {
      const [path = '/', query] = (req.url ?? '/').split('?', 2);
      if (!path.startsWith(TRACKING_PATH)) return false;
      const parts = path.slice(TRACKING_PATH.length).split('/');
      const probe = req.method === 'HEAD';
      // The URLs this front writes carry no query: one with a query was altered.
      if ((req.method !== 'GET' && !probe) || query !== undefined) notFound(res);
      else if (parts[0] === 'open' && parts.length === 3) {
        const [, id = '', signature = ''] = parts;
        const reference = verified(id, signature);
        if (!reference) return (notFound(res), true);
        if (!probe) record(reference, { type: 'Open', open: engagement(req) });
        res.writeHead(200, { 'Content-Type': 'image/gif', 'Content-Length': PIXEL.length, 'Cache-Control': 'no-store, max-age=0' });
        res.end(probe ? undefined : PIXEL);
      } else if (parts[0] === 'click' && parts.length === 4) {
        const [, id = '', signature = '', named = ''] = parts;
        // The number as written, with no leading zero: `00.<token>` is an altered URL, not link 0's.
        const [, index = '', token = ''] = /^(0|[1-9]\d{0,5})\.(.+)$/.exec(named) ?? [];
        const reference = verified(id, signature);
        const link = reference?.links[Number(index)];
        if (!reference || link === undefined || !same(token, reference.tokens[Number(index)] ?? '')) return (notFound(res), true);
        if (!probe) record(reference, { type: 'Click', click: { ...engagement(req), link, linkTags: {} } });
        // A header is bytes: characters past ASCII go percent-encoded as UTF-8, as a browser sends them.
        res.writeHead(302, { Location: link.replace(/[^\x21-\x7e]+/g, (text) => encodeURIComponent(text)), 'Content-Length': 0, 'Cache-Control': 'no-store' });
        res.end();
      } else notFound(res);
      return true;
    },
  };
}
