/**
 * Amazon SES's maximum send rate, played in front of the SES emulator (which has no limit) when
 * `SES_MAX_SEND_RATE` is set, so pacing can be seen and tested on a laptop:
 *
 * - `SendEmail` above the rate is answered as SES answers it: HTTP 429,
 *   `TooManyRequestsException`, "Maximum sending rate exceeded."; recipients are counted as SES
 *   counts them (To + Cc + Bcc), in a token bucket of one second's worth refilled at the rate;
 * - `GetAccount` answers with that rate as `SendQuota.MaxSendRate`;
 * - `GET /rate-limit` says what the gate let through and refused;
 * - everything else (the viewer, `/store`) is passed on unchanged.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { RunningService } from './emulators';
import { closeServer, listening, startSesEmulator } from './emulators';
import { forwarderTo, readAll } from './forward';
import { LOOPBACK } from './settings';

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

export async function startRateGate(options: { upstream: string; maxSendRate: number; port?: number; now?: () => number }): Promise<RunningRateGate> {
  const { maxSendRate } = options;
  const now = options.now ?? Date.now;
  const capacity = Math.max(1, Math.floor(maxSendRate));
  const forwarder = forwarderTo(options.upstream);
  let tokens = capacity;
  let refilledAt = now();
  const counts = { accepted: 0, recipients: 0, throttled: 0 };

  const take = (n: number): boolean => {
    const at = now();
    tokens = Math.min(capacity, tokens + ((at - refilledAt) / 1_000) * maxSendRate);
    refilledAt = at;
    if (tokens + EPSILON < n) return false;
    tokens -= n;
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
    if (req.method === 'GET' && path === ACCOUNT_PATH) {
      json(res, 200, {
        SendQuota: { Max24HourSend: 50_000, MaxSendRate: maxSendRate, SentLast24Hours: counts.recipients },
        SendingEnabled: true,
        ProductionAccessEnabled: true,
        EnforcementStatus: 'HEALTHY',
        DedicatedIpAutoWarmupEnabled: false,
      });
      return;
    }
    if (req.method === 'GET' && path === '/rate-limit') {
      json(res, 200, { maxSendRate, ...counts });
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
    }
    forwarder.forward(req, body, res);
  };

  const server = createServer((req, res) => {
    serve(req, res).catch(() => res.destroy());
  });
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
 * The local stack's SES on `port`: the emulator itself, or, with a rate, the emulator on a free
 * port behind a rate gate on `port` (the viewer is reached through the gate as well).
 */
export async function startLocalSes(options: { port: number; maxSendRate?: number | undefined }): Promise<RunningService & { description: string }> {
  if (options.maxSendRate === undefined) {
    const ses = await startSesEmulator({ port: options.port });
    return { ...ses, description: `aws-ses-v2-local, viewer at ${ses.endpoint}/` };
  }
  const emulator = await startSesEmulator();
  try {
    const gate = await startRateGate({ upstream: emulator.endpoint, maxSendRate: options.maxSendRate, port: options.port });
    return {
      ...gate,
      description: `aws-ses-v2-local behind a ${options.maxSendRate}/s send-rate gate (SES_MAX_SEND_RATE), viewer at ${gate.endpoint}/`,
      close: async () => {
        await gate.close();
        await emulator.close();
      },
    };
  } catch (error) {
    await emulator.close();
    throw error;
  }
}
