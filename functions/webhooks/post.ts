/**
 * One webhook POST, made so that it can only reach a public address (security audit round 2,
 * finding 3). Checking a URL's name when it is set is not enough: its DNS answer can change at any
 * time (DNS rebinding), also between a check and the connection. So the name is resolved here,
 * inside the connection itself (a custom `lookup` on the socket), every address of the answer is
 * checked, and the socket connects to the checked addresses, never to a second answer. A URL that
 * names an address (no lookup happens) was checked by `webhookUrlProblem` just before.
 *
 * Plain node:http(s) rather than fetch: fetch has no way to hand its connection a lookup. It
 * follows no redirect (a redirect answer is just a failed attempt), and reads no answer body.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import type { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createRequire } from 'node:module';
import type { LookupFunction } from 'node:net';
import { isLoopbackAddress, isPublicAddress } from '../shared/webhooks/public-address';

/** Resolves a name to all its addresses (node:dns `lookup` with `all`, in tests a stub). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export interface WebhookRequest {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs: number;
}

/** POSTs the request and resolves with the answer's status; rejects when there was no answer. */
export type WebhookPoster = (url: string, request: WebhookRequest) => Promise<number>;

export interface PosterOptions {
  /** The local stack's webhooks may reach this machine; in AWS nothing but public addresses. */
  readonly allowLoopback: boolean;
  readonly resolve?: Resolver;
}

/** The webhook's name resolves to an address it may not reach; nothing was sent. */
export class NonPublicAddressError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NonPublicAddressError';
  }
}

const resolveAll: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A socket `lookup` that hands on only addresses that pass the check, and fails when any does not. */
export function checkedLookup(options: PosterOptions): LookupFunction {
  const resolve = options.resolve ?? resolveAll;
  const allowed = (address: string) => isPublicAddress(address) || (options.allowLoopback && isLoopbackAddress(address));
  return (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (answers) => {
        const family = lookupOptions.family === 4 || lookupOptions.family === 6 ? lookupOptions.family : undefined;
        const usable = answers.filter((answer) => family === undefined || answer.family === family);
        // One refused address refuses the name: an answer that mixes a public address with the
        // metadata endpoint is an attack, not a choice.
        const refused = answers.find((answer) => !allowed(answer.address));
        if (refused) return callback(new NonPublicAddressError(`${hostname} resolves to ${refused.address}, not a public address`), '', 4);
        if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
        if (lookupOptions.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, usable);
        return callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 4),
    );
  };
}

/**
 * `node:http` is required when a plain-HTTP target (the local stack's) is first posted to, never
 * imported: imported as an ES module on Node 22 and later it loads undici, Node's fetch, with it,
 * about 20 ms of every cold start of a function whose targets are HTTPS anyway.
 */
const requireBuiltin = createRequire(import.meta.url);

interface Transport {
  readonly request: typeof httpRequest;
  readonly agent: HttpAgent;
}

export function createWebhookPoster(options: PosterOptions): WebhookPoster {
  const lookup = checkedLookup(options);
  // Kept-alive connections are to checked addresses already; a new one is checked again.
  const agentOptions = { keepAlive: true, timeout: 15_000 };
  const secure: Transport = { request: httpsRequest, agent: new HttpsAgent(agentOptions) };
  let plain: Transport | undefined;
  const transport = (protocol: string): Transport => {
    if (protocol === 'https:') return secure;
    if (!plain) {
      const http = requireBuiltin('node:http') as typeof import('node:http');
      plain = { request: http.request, agent: new http.Agent(agentOptions) };
    }
    return plain;
  };
  return (url, { headers, body, timeoutMs }) =>
    new Promise<number>((resolve, reject) => {
      const target = new URL(url);
      const { request: send, agent } = transport(target.protocol);
      const req = send(
        target,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          agent,
          lookup,
          signal: AbortSignal.timeout(timeoutMs),
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.once('error', reject);
      req.end(body);
    });
}
