/**
 * What the service writes to its logs: one summary line per request, and never the API key,
 * the Authorization header, addresses or bodies.
 */
import { describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import { createLogger } from '../../functions/shared/runtime/observability';
import type { Harness, Tenant } from '../support/harness';
import { authorised, message, sendBody, useHarness } from '../support/harness';

let h!: Harness;
let tenant!: Tenant;

useHarness((harness, first) => {
  h = harness;
  tenant = first;
});

async function captureLogs(run: (logger: Logger) => Promise<void>, logger = new Logger({ serviceName: 'email-send-api', logLevel: 'DEBUG' })): Promise<string[]> {
  const lines: string[] = [];
  const capture = (chunk: unknown) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  };
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture as never);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture as never);
  try {
    await run(logger);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return lines;
}

/** `run` with the environment variable `name` set to `value`, and then as it was. */
async function withEnv<T>(name: string, value: string, run: () => T | Promise<T>): Promise<T> {
  const previous = process.env[name];
  process.env[name] = value;
  try {
    return await run();
  } finally {
    if (previous === undefined) delete process.env[name];
    else process.env[name] = previous;
  }
}

describe('logging', () => {
  it('logs one JSON summary per request, without the key, header, addresses or content', async () => {
    const secretSubject = 'Subject-7c1e';
    const lines = await captureLogs(async (logger) => {
      await h.invoke({ headers: authorised(tenant), body: sendBody(tenant, [message({ Subject: secretSubject, TextContent: 'Body-9f2a' })]) }, { logger });
      await h.invoke({ headers: authorised(tenant), body: { OrganizationId: tenant.organizationId, Messages: [message({ To: ['bad'] })] } }, { logger });
      await h.invoke({ headers: authorised(tenant, { authorization: `Bearer ${tenant.apiKey}x` }), body: sendBody(tenant) }, { logger });
      await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, { logger, access: { lookup: () => Promise.reject(new Error(`boom with ${tenant.apiKey.slice(0, 0)}`)), recordUse: async () => undefined } });
    });
    const text = lines.join('\n');
    expect(lines.length).toBeGreaterThan(0);
    const summaries = lines.map((line) => JSON.parse(line)).filter((entry) => entry.message === 'request finished');
    expect(summaries.map((s) => s.statusCode)).toEqual([200, 400, 401, 500]);
    expect(summaries[0]).toMatchObject({
      organizationId: tenant.organizationId,
      userId: tenant.userId,
      messages: 1,
      sent: 1,
      expired: 0,
      failed: 0,
      method: 'POST',
      path: '/v1.2/email/send',
      requestId: expect.any(String),
      latencyMs: expect.any(Number),
    });
    expect(summaries[1]).toMatchObject({ userId: tenant.userId, statusCode: 400 });
    const debug = lines.map((line) => JSON.parse(line)).filter((entry) => entry.message === 'message results');
    expect(debug).toEqual([expect.objectContaining({ level: 'DEBUG', results: [{ index: 0, status: 'Sent' }] })]);
    expect(summaries[2]).not.toHaveProperty('userId');
    for (const forbidden of [tenant.apiKey, tenant.apiKey.slice(4, 20), 'Bearer', 'alice@example.org', 'noreply@example.com', secretSubject, 'Body-9f2a']) {
      expect(text).not.toContain(forbidden);
    }
  });

  it('never logs the event, and so the key, even with POWERTOOLS_LOGGER_LOG_EVENT=true', async () => {
    await withEnv('POWERTOOLS_LOGGER_LOG_EVENT', 'true', async () => {
      const lines = await captureLogs(async (logger) => {
        await h.invoke({ headers: authorised(tenant), body: sendBody(tenant) }, { logger });
      });
      expect(lines.some((line) => line.includes('request finished'))).toBe(true);
      expect(lines.join('\n')).not.toContain(tenant.apiKey);
      expect(lines.join('\n')).not.toContain('Bearer');
    });
  });

  it('redacts a key a client put in the path, in the log line and in the 404 that quotes the path, with the logger the functions use', async () => {
    let body = '';
    const lines = await captureLogs(async (logger) => {
      const result = await h.invoke({ method: 'GET', path: `/v1.2/${tenant.apiKey}`, headers: authorised(tenant) }, { logger });
      expect(result.statusCode).toBe(404);
      body = result.rawBody;
    }, await withEnv('POWERTOOLS_LOG_LEVEL', 'INFO', createLogger));
    const finished = lines.map((line) => JSON.parse(line)).find((entry) => entry.message === 'request finished');
    expect(finished).toMatchObject({ statusCode: 404, path: '/v1.2/[redacted API key]' });
    expect(body).toContain('Nothing is served at /v1.2/[redacted API key].');
    for (const text of [lines.join('\n'), body]) expect(text).not.toContain(tenant.apiKey.slice(4, 20));
  });
});
