/**
 * The local stack's front of the SES emulator. It always hands each accepted `SendEmail` (request
 * and answer, with the SES message id) to the mailbox simulator (`onSent`), and it plays Amazon
 * SES's maximum send rate, which the emulator does not have, when `SES_MAX_SEND_RATE` is set, so
 * pacing can be seen and tested on a laptop:
 *
 * - `SendEmail` above the rate is answered as SES answers it: HTTP 429,
 *   `TooManyRequestsException`, "Maximum sending rate exceeded."; recipients are counted as SES
 *   counts them (To + Cc + Bcc), in a token bucket of one second's worth refilled at the rate (a
 *   call for more recipients than that waits until the bucket has stood full long enough to pay
 *   for them all, as the service's pacing sends it, and empties it);
 * - `GetAccount` answers with that rate as `SendQuota.MaxSendRate`;
 * - `GET /rate-limit` says what the gate let through and refused;
 * - with a mail viewer (`mail-viewer.ts`), the viewer page and `/store` show each message's
 *   tags, custom headers and inline images too;
 * - with a tracker (`tracking.ts`), a SendEmail through a tracked configuration set has its HTML
 *   rewritten as SES would before the emulator stores it, and `/track/…` is the tracking endpoint;
 * - everything else (the viewer, `/store`) is passed on unchanged.
 *
 * Only the service's own sends feed the simulator: anyone on this machine can call the local SES
 * endpoint, and a SendEmail whose tags name an Organization would otherwise put bounce events
 * (and so suppressions) on that Organization (security audit round 2, finding 6). In AWS only SES
 * itself can publish to the events queue. So each start draws a secret, the service's SES client
 * adds it to its requests (`ownSends`), and the front compares it in constant time and strips it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { MAX_RECIPIENTS } from '../../functions/shared/domain/header-safety';
import type { Instrument } from '../../functions/shared/runtime/clients';
import { createServer } from 'node:http';
import type { RunningService } from './emulators';
import { closeServer, listening, startSesEmulator } from './emulators';
import { forwarderTo, readAll } from './forward';
import { guardHost } from './host-guard';
import type { MailViewer } from './mail-viewer';
import { createMailViewer } from './mail-viewer';
import { LOOPBACK } from './settings';
import type { Tracker } from './tracking';
import { createTracker } from './tracking';

export interface RateGateStats {
  readonly maxSendRate: number;
  /** SendEmail calls let through, and their recipients. */
  readonly accepted: number;
  readonly recipients: number;
  /** SendEmail calls refused with 429. */
  readonly throttled: number;
}

export interface RunningRateGate extends RunningService {
  stats(): RateGateStats;
}

const SEND_PATH = '/v2/email/outbound-emails';
const ACCOUNT_PATH = '/v2/email/account';
/** Arithmetic slack, so a call that arrives exactly on its turn is not refused for a rounding error. */
const EPSILON = 1e-6;

/** Recipients of a SendEmail body, as SES counts them; 1 for a body it cannot read (SES would refuse it anyway). */
export function recipientsOfSendEmail(body: Buffer): number {
  try {
    const destination = (JSON.parse(body.toString('utf8')) as { Destination?: Record<string, unknown> }).Destination ?? {};
    const count = (list: unknown) => (Array.isArray(list) ? list.length : 0);
    return Math.max(1, count(destination.ToAddresses) + count(destination.CcAddresses) + count(destination.BccAddresses));
  } catch {
    return 1;
  }
}

/**
 * An accepted SendEmail: the request body as sent, the emulator's answer, and when it was accepted
 * (epoch ms). The front reads its clock once for both the simulator and the tracking endpoint, so
 * every event of the message carries the same `mail.timestamp`, as SES's do: the events function
 * keys the Activity row by it, and two readings a millisecond apart would put a message's opens
 * and clicks on a row of their own that Activity never lists.
 */
export type SentListener = (request: Buffer, answer: Buffer, sentAt: number) => void;

/** The header that marks the service's own sends, with the front's per-start secret. */
export const OWN_SEND_HEADER = 'x-local-send-secret';

/** Whether the request carries `secret` in OWN_SEND_HEADER; the header is removed either way. */
function takeOwnSendMark(req: IncomingMessage, secret: Buffer | undefined): boolean {
  const value = req.headers[OWN_SEND_HEADER];
  delete req.headers[OWN_SEND_HEADER];
  if (!secret || typeof value !== 'string') return false;
  const given = Buffer.from(value);
  return given.length === secret.length && timingSafeEqual(given, secret);
}

/** An `instrument` for the service's SES client: its requests carry `secret` to the front. */
export function markOwnSends(secret: string): Instrument {
  return (client) => {
    if (client instanceof SESv2Client) {
      client.middlewareStack.add(
        (next) => async (args) => {
          const request = args.request as { headers?: Record<string, string> };
          if (request.headers) request.headers[OWN_SEND_HEADER] = secret;
          return next(args);
        },
        { step: 'build', name: 'markOwnSends' },
      );
    }
    return client;
  };
}

export interface FrontOptions {
  readonly upstream: string;
  /** Without one, nothing is throttled and GetAccount is the emulator's own answer. */
  readonly maxSendRate?: number | undefined;
  readonly onSent?: SentListener | undefined;
  /** Only a SendEmail carrying this secret (OWN_SEND_HEADER) is handed to `onSent`. */
  readonly sendSecret?: string | undefined;
  /** Adds tags, headers and inline images to the viewer and `/store` (the local stack's own emulator). */
  readonly viewer?: MailViewer | undefined;
  /** Plays SES's open and click tracking (the local stack's own emulator). */
  readonly tracker?: Tracker | undefined;
  readonly port?: number;
  readonly now?: () => number;
}

export async function startRateGate(options: FrontOptions): Promise<RunningRateGate> {
  const maxSendRate = options.maxSendRate ?? Number.POSITIVE_INFINITY;
  const limited = options.maxSendRate !== undefined;
  const now = options.now ?? Date.now;
  const capacity = Math.max(1, Math.floor(maxSendRate));
  const forwarder = forwarderTo(options.upstream);
  const sendSecret = options.sendSecret === undefined ? undefined : Buffer.from(options.sendSecret);
  // The bucket's tokens are `min(capacity, banked)`. `banked` goes on filling while the bucket is
  // full, up to one more message's worth of recipients: what a wide message is paid from.
  let banked = capacity;
  let refilledAt = now();
  const counts = { accepted: 0, recipients: 0, throttled: 0 };

  const take = (n: number): boolean => {
    if (!limited) return true;
    const at = now();
    banked = Math.min(capacity + MAX_RECIPIENTS, banked + ((at - refilledAt) / 1_000) * maxSendRate);
    refilledAt = at;
    // A call within one second's worth is paid from the bucket. One to more recipients (SES takes
    // one: a sandbox, 1 a second, sends to 50) is paid from what was banked, so it goes once the
    // bucket has stood full long enough, and leaves it empty: no more than the rate gets through.
    const available = n <= capacity ? Math.min(capacity, banked) : banked;
    if (available + EPSILON < n) return false;
    banked = Math.min(capacity, available - n);
    return true;
  };

  const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) => {
    const body = JSON.stringify(value);
    res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readAll(req);
    const path = (req.url ?? '/').split('?')[0];
    const ownSend = takeOwnSendMark(req, sendSecret);
    if (limited && req.method === 'GET' && path === ACCOUNT_PATH) {
      json(res, 200, {
        SendQuota: { Max24HourSend: 50_000, MaxSendRate: maxSendRate, SentLast24Hours: counts.recipients },
        SendingEnabled: true,
        ProductionAccessEnabled: true,
        EnforcementStatus: 'HEALTHY',
        DedicatedIpAutoWarmupEnabled: false,
      });
      return;
    }
    if (limited && req.method === 'GET' && path === '/rate-limit') {
      json(res, 200, { maxSendRate, ...counts });
      return;
    }
    if (options.tracker?.serve(req, res)) return;
    const { viewer } = options;
    if (viewer && req.method === 'GET' && (path === '/' || path === '/store')) {
      const answer = await fetch(`${options.upstream}${req.url ?? '/'}`);
      if (path === '/store' && answer.ok) json(res, 200, viewer.augmentStore((await answer.json()) as Record<string, unknown>));
      else {
        const text = await answer.text();
        const page = path === '/' && answer.ok ? viewer.augmentPage(text) : text;
        res.writeHead(answer.status, { 'Content-Type': answer.headers.get('content-type') ?? 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(page) });
        res.end(page);
      }
      return;
    }
    if (req.method === 'POST' && path === SEND_PATH) {
      const recipients = recipientsOfSendEmail(body);
      if (!take(recipients)) {
        counts.throttled++;
        json(res, 429, { message: 'Maximum sending rate exceeded.' }, { 'x-amzn-ErrorType': 'TooManyRequestsException' });
        return;
      }
      counts.accepted++;
      counts.recipients += recipients;
      const { onSent } = options;
      const tracked = options.tracker?.prepare(body);
      if ((onSent && ownSend) || viewer || tracked) {
        // A tracked message is stored, viewed and simulated as sent: rewritten.
        const sent = tracked?.body ?? body;
        forwarder.forward(req, sent, res, (status, answer) => {
          if (status !== 200) return;
          const sentAt = now();
          tracked?.accepted(answer, ownSend, sentAt);
          viewer?.record(sent, answer);
          if (ownSend) onSent?.(sent, answer, sentAt);
        });
        return;
      }
    }
    forwarder.forward(req, body, res);
  };

  const server = guardHost(
    createServer((req, res) => {
      serve(req, res).catch(() => res.destroy());
    }),
  );
  const port = await listening(server, options.port ?? 0);
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    port,
    stats: () => ({ maxSendRate, ...counts }),
    close: async () => {
      forwarder.close();
      await closeServer(server);
    },
  };
}

/**
 * The local stack's SES on `port`: the emulator on a free port behind the front on `port` (the
 * viewer is reached through the front as well), with the rate gate when a rate is given.
 */
export async function startLocalSes(options: {
  port: number;
  maxSendRate?: number | undefined;
  onSent?: SentListener;
  /** Where the tracking endpoint's Open and Click events go (the events queue). */
  onEngagement?: (event: Record<string, unknown>) => void;
  region?: string;
  /** The front's clock (tests); Date.now otherwise. */
  now?: () => number;
}): Promise<RunningService & { description: string; upstream: string; ownSends: Instrument }> {
  const emulator = await startSesEmulator();
  const sendSecret = randomBytes(32).toString('base64url');
  try {
    let origin = '';
    const tracker = createTracker({ region: options.region ?? 'us-east-1', origin: () => origin, publish: (event) => options.onEngagement?.(event), now: options.now });
    const front = await startRateGate({ upstream: emulator.endpoint, maxSendRate: options.maxSendRate, onSent: options.onSent, sendSecret, viewer: createMailViewer(), tracker, port: options.port, now: options.now });
    origin = front.endpoint;
    const gate = options.maxSendRate === undefined ? '' : ` behind a ${options.maxSendRate}/s send-rate gate (SES_MAX_SEND_RATE)`;
    return {
      ...front,
      upstream: emulator.endpoint,
      /** For the service's SES client: marks its sends as the ones the simulator plays. */
      ownSends: markOwnSends(sendSecret),
      description: `aws-ses-v2-local${gate}, mailbox simulator and open/click tracking on, viewer at ${front.endpoint}/`,
      close: async () => {
        await front.close();
        await emulator.close();
      },
    };
  } catch (error) {
    await emulator.close();
    throw error;
  }
}
