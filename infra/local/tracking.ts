/**
 * Amazon SES's open and click tracking, played by the local SES front (CONTRACT section 17, item
 * 5). A SendEmail through a tracked configuration set (functions/shared/mail/tracking.ts names
 * them; nothing else decides) has its `Simple` HTML rewritten as SES would (tracking-rewrite.ts)
 * before the emulator stores it, so the mail viewer shows the message as a recipient gets it.
 * The tracking endpoint is served by the same front, on the viewer's origin:
 *
 * - `GET /track/open/<ref>/<sig>`: the pixel; records an Open and answers a 1x1 GIF;
 * - `GET /track/click/<ref>/<n>/<sig>`: the n-th link; records a Click and answers 302 to the
 *   link's original URL.
 *
 * `<ref>` is a random reference drawn for the message, `<sig>` an HMAC-SHA256 of what the URL
 * names under a key drawn at each start, compared in constant time. A URL whose signature does not
 * match, or whose reference this front does not know (another start's, or one of the oldest past
 * the last 10,000 tracked messages), is answered 404 with no `Location`: the endpoint redirects
 * only to URLs that were in a message it sent, so it is no open redirect. The original URLs are
 * kept here, never in the URL, so nobody can learn or alter them from outside.
 *
 * Each recorded Open and Click is the event SES publishes (functions/shared/delivery/
 * mailbox-simulator.ts builds it), with the request's User-Agent and address, handed at once to
 * the same local events queue as the mailbox simulator's. As with the simulator, only the
 * service's own sends produce events (ses-rate-gate.ts says why); anyone else's tracked mail is
 * rewritten and redirected all the same.
 *
 * `Raw` content (the rare message whose headers `Simple` cannot carry) is passed on as it is: its
 * HTML is not rewritten locally, so it has no pixel and no tracked link on a laptop.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { engagementEvent } from '../../functions/shared/delivery/mailbox-simulator';
import type { Engagement, SimulatedSend } from '../../functions/shared/delivery/mailbox-simulator';
import { trackingOfConfigurationSet } from '../../functions/shared/mail/tracking';
import type { Tracking } from '../../functions/shared/mail/tracking';
import { simulatedSendOf } from './mailbox-simulator';
import { rewriteHtml } from './tracking-rewrite';

export const TRACKING_PATH = '/track/';
/** A transparent 1x1 GIF, the smallest image every mail client shows. */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
/** Tracked messages remembered (then the oldest's URLs answer 404, as an unknown one does). */
const KEPT = 10_000;
/** Every tracked set's name ends in one of `track-opens`, `track-clicks`, `track-opens-clicks`. */
const TRACKED_MARK = Buffer.from('track-');

type Json = Record<string, any>;

export interface TrackerOptions {
  readonly region: string;
  /** The front's own origin (`http://127.0.0.1:<port>`), known once it listens. */
  readonly origin: () => string;
  /** Hands an EventBridge event to the events function's queue. */
  readonly publish: (event: Record<string, unknown>) => void;
  readonly now?: () => number;
}

/** A tracked SendEmail, rewritten; `accepted` once the emulator has answered 200. */
export interface TrackedSend {
  readonly body: Buffer;
  readonly tracking: Tracking;
  accepted(answer: Buffer, ownSend: boolean): void;
}

export interface Tracker {
  /** The request to pass on for this SendEmail body: undefined when it is not tracked (passed on as it is). */
  prepare(body: Buffer): TrackedSend | undefined;
  /** Answers a request for the tracking endpoint; false when the path is not the endpoint's. */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
}

interface Reference {
  readonly send: SimulatedSend;
  readonly links: readonly string[];
  readonly ownSend: boolean;
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

  /** The reference a signed path names, when the signature is this start's and the reference known. */
  const verified = (signed: string, signature: string, id: string): Reference | undefined => {
    const expected = Buffer.from(sign(signed));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return references.get(id);
  };

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
      if (body.indexOf(TRACKED_MARK) === -1) return undefined;
      let request: Json;
      try {
        request = JSON.parse(body.toString('utf8')) as Json;
      } catch {
        return undefined;
      }
      const tracking = trackingOfConfigurationSet(typeof request.ConfigurationSetName === 'string' ? request.ConfigurationSetName : undefined);
      const html = request.Content?.Simple?.Body?.Html;
      if ((!tracking.opens && !tracking.clicks) || typeof html?.Data !== 'string') return undefined;
      const id = randomBytes(16).toString('base64url');
      const origin = `${options.origin()}${TRACKING_PATH}`;
      const rewritten = rewriteHtml(html.Data, tracking, {
        open: `${origin}open/${id}/${sign(`open/${id}`)}`,
        click: (index) => `${origin}click/${id}/${index}/${sign(`click/${id}/${index}`)}`,
      });
      html.Data = rewritten.html;
      return {
        body: Buffer.from(JSON.stringify(request)),
        tracking,
        accepted(answer, ownSend) {
          let messageId: unknown;
          try {
            messageId = (JSON.parse(answer.toString('utf8')) as Json).MessageId;
          } catch {
            return;
          }
          if (typeof messageId !== 'string') return;
          references.set(id, { send: simulatedSendOf(request, messageId, options.region, now()), links: rewritten.links, ownSend });
          if (references.size > KEPT) references.delete(references.keys().next().value as string);
        },
      };
    },

    serve(req, res) {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (!path.startsWith(TRACKING_PATH)) return false;
      const parts = path.slice(TRACKING_PATH.length).split('/');
      if (req.method !== 'GET') notFound(res);
      else if (parts[0] === 'open' && parts.length === 3) {
        const [, id = '', signature = ''] = parts;
        const reference = verified(`open/${id}`, signature, id);
        if (!reference) return (notFound(res), true);
        record(reference, { type: 'Open', open: engagement(req) });
        res.writeHead(200, { 'Content-Type': 'image/gif', 'Content-Length': PIXEL.length, 'Cache-Control': 'no-store, max-age=0' });
        res.end(PIXEL);
      } else if (parts[0] === 'click' && parts.length === 4) {
        const [, id = '', index = '', signature = ''] = parts;
        const reference = /^\d{1,6}$/.test(index) ? verified(`click/${id}/${index}`, signature, id) : undefined;
        const link = reference?.links[Number(index)];
        if (!reference || link === undefined) return (notFound(res), true);
        record(reference, { type: 'Click', click: { ...engagement(req), link, linkTags: {} } });
        res.writeHead(302, { Location: link, 'Content-Length': 0, 'Cache-Control': 'no-store' });
        res.end();
      } else notFound(res);
      return true;
    },
  };
}
