/**
 * Where a webhook may point (security audit round 2, finding 3): never at the instance metadata
 * endpoint, a private range, this machine, or any other non-public address, however it is
 * spelled, when the URL is set and again at delivery, where the name is resolved, the answer
 * checked and the connection made to the checked address. DNS is stubbed throughout, and no
 * request is ever sent to a non-public address: the only server here is on 127.0.0.1, reached
 * only where the local stack allows it.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import { AesGcmSealer } from '../../functions/shared/webhooks/sealing';
import { webhookUrlProblem } from '../../functions/shared/webhooks/webhook-url';
import { deliverWebhook } from '../../functions/webhooks/deliver';
import type { Resolver } from '../../functions/webhooks/post';
import { NonPublicAddressError, createWebhookPoster } from '../../functions/webhooks/post';
import { closeServer, listening } from '../../infra/local/emulators';

const NOT_PUBLIC = /must point to a public address/;

describe('webhookUrlProblem: the address a URL names', () => {
  it.each([
    'https://169.254.169.254/latest/meta-data/',
    'https://169.254.169.254./latest/meta-data/',
    'https://10.0.0.8/in',
    'https://172.16.3.4/in',
    'https://192.168.1.10/in',
    'https://100.64.0.1/in',
    'https://127.0.0.1/in',
    'https://0.0.0.0/in',
    'https://224.0.0.1/in',
    'https://[::1]/in',
    'https://[fd12:3456::1]/in',
    'https://[fe80::1]/in',
    'https://[::ffff:127.0.0.1]/in',
    'https://[::ffff:a9fe:a9fe]/in',
    'https://[64:ff9b::a9fe:a9fe]/in',
    'https://2130706433/in',
    'https://0x7f.1/in',
    'https://0177.0.0.1/in',
    'https://127.1/in',
    'https://0xa9.0xfe.0xa9.0xfe/in',
    'https://localhost/in',
    'https://hooks.localhost./in',
  ])('refuses %s, in AWS and locally alike', (url) => {
    expect(webhookUrlProblem(url, false)).toMatch(NOT_PUBLIC);
    // Locally only plain http to 127.0.0.1 is let through (below), not the metadata endpoint or a LAN.
    if (!/127\.0\.0\.1|2130706433|0x7f\.1|0177|127\.1|localhost|\[::1\]|::ffff:127/.test(url)) expect(webhookUrlProblem(url, true)).toMatch(NOT_PUBLIC);
  });

  it.each(['https://hooks.example.com/in', 'https://8.8.8.8/in', 'https://[2606:4700:4700::1111]/in'])('accepts %s', (url) => {
    expect(webhookUrlProblem(url, false)).toBeUndefined();
  });

  it('lets http:// and https:// to this machine through on the local stack only', () => {
    for (const url of ['http://127.0.0.1:8080/in', 'http://localhost:8080/in', 'https://127.0.0.1:8443/in']) {
      expect(webhookUrlProblem(url, true)).toBeUndefined();
      expect(webhookUrlProblem(url, false)).toBeDefined();
    }
  });
});

describe('createWebhookPoster: resolve, check, connect to the checked address', () => {
  let server: Server;
  let port: number;
  const received: IncomingHttpHeaders[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      received.push(req.headers);
      req.resume();
      res.writeHead(204).end();
    });
    port = await listening(server, 0);
  });
  afterAll(() => closeServer(server));

  /** DNS as stubbed: each name's answer, and every name asked for. */
  function dns(answers: Record<string, string[]>): Resolver & { asked: string[] } {
    const asked: string[] = [];
    const resolve = async (hostname: string): Promise<LookupAddress[]> => {
      asked.push(hostname);
      const found = answers[hostname];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return Object.assign(resolve, { asked });
  }

  const request = { headers: { 'content-type': 'application/json' }, body: '{}', timeoutMs: 2_000 };

  it('refuses a name that resolves to the metadata endpoint, a private or a mapped loopback address, and connects nowhere', async () => {
    for (const answer of [['169.254.169.254'], ['10.1.2.3'], ['::ffff:127.0.0.1'], ['fd00::5'], ['93.184.216.34', '127.0.0.1']]) {
      received.length = 0;
      const resolver = dns({ 'hooks.example.test': answer });
      const post = createWebhookPoster({ allowLoopback: false, resolve: resolver });
      await expect(post(`http://hooks.example.test:${port}/in`, request)).rejects.toBeInstanceOf(NonPublicAddressError);
      expect(resolver.asked).toEqual(['hooks.example.test']);
      expect(received).toEqual([]);
    }
  });

  it('makes a refused answer a failed attempt, retried on the schedule, with the reason logged and nothing sent', async () => {
    received.length = 0;
    const sealer = new AesGcmSealer(async () => Buffer.alloc(32, 9));
    const org = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
    const sealedSecret = await sealer.seal(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, org);
    const warnings: unknown[] = [];
    const logger = new Logger({ logLevel: 'SILENT' });
    logger.warn = ((message: string, extra: unknown) => warnings.push({ message, extra })) as typeof logger.warn;
    const outcome = await deliverWebhook({ organizationId: org, webhookId: 'msg_1', payload: '{}' }, 1, {
      webhooks: { get: async () => ({ organizationId: org, url: `https://rebound.example.test:${port}/in`, sealedSecret, createdAt: 'x' }) },
      sealer,
      allowLoopbackHttp: false,
      post: createWebhookPoster({ allowLoopback: false, resolve: dns({ 'rebound.example.test': ['169.254.169.254'] }) }),
      logger,
      now: Date.now,
    });
    expect(outcome).toEqual({ kind: 'retry', afterSeconds: 5 });
    expect(warnings).toEqual([{ message: 'webhook delivery failed', extra: expect.objectContaining({ refused: 'rebound.example.test resolves to 169.254.169.254, not a public address' }) }]);
    expect(received).toEqual([]);
  });

  it('connects to the address it checked, not to a second answer of the name', async () => {
    received.length = 0;
    // Locally, loopback is allowed: the name resolves once, to this machine's test server.
    const resolver = dns({ 'hooks.example.test': ['127.0.0.1'] });
    const post = createWebhookPoster({ allowLoopback: true, resolve: resolver });
    expect(await post(`http://hooks.example.test:${port}/in`, request)).toBe(204);
    expect(resolver.asked).toEqual(['hooks.example.test']);
    expect(received).toHaveLength(1);
    expect(received[0]!.host).toBe(`hooks.example.test:${port}`);
  });
});
