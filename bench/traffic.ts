/**
 * The two kinds of caller the benchmark compares: the service's API over HTTP, and a developer
 * who calls SES v2 with the AWS SDK by hand (one SendEmail per message, their own little pool).
 */
import { Agent, request } from 'node:http';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';

export interface ApiAnswer {
  readonly status: number;
  readonly body: string;
}

export interface Tenant {
  readonly apiKey: string;
  readonly organizationId: string;
  readonly senderDomain: string;
  /** A file every message of this sender carries (`--attachment-bytes`), to the API and to SES alike. */
  readonly attachment?: Buffer | undefined;
}

/** A client with keep-alive, as any SDK or HTTP library in front of an API would have. */
export function apiClient(sendUrl: string) {
  const url = new URL(sendUrl);
  // The timeout makes Node honour the server's Keep-Alive hint, so an idle connection is never
  // reused just as the server closes it (that would fail a request for a reason of our own).
  const agent = new Agent({ keepAlive: true, maxSockets: 256, timeout: 15_000 });
  return {
    post(tenant: Tenant, body: unknown, timeoutMs = 30_000): Promise<ApiAnswer> {
      const payload = Buffer.from(JSON.stringify(body));
      return new Promise((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            agent,
            timeout: timeoutMs,
            headers: {
              authorization: `Bearer ${tenant.apiKey}`,
              'content-type': 'application/json',
              'content-length': String(payload.length),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
            res.on('error', reject);
          },
        );
        req.on('timeout', () => req.destroy(new Error(`no answer from ${sendUrl} within ${timeoutMs} ms`)));
        req.on('error', reject);
        req.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}

/** The n-th benchmark message: the same content for the service and for the direct calls. */
export function benchMessage(tenant: Tenant, n: number) {
  return {
    From: `noreply@${tenant.senderDomain}`,
    To: [`recipient-${n}@example.org`],
    Subject: `Benchmark message ${n}`,
    TextContent: 'Hello from npm run bench. This is the body of a short transactional message.',
    ...(tenant.attachment && { Attachments: [{ FileName: 'receipt.pdf', Content: tenant.attachment.toString('base64') }] }),
  };
}

export function sendBody(tenant: Tenant, count: number, first = 0) {
  return { OrganizationId: tenant.organizationId, Messages: Array.from({ length: count }, (_, i) => benchMessage(tenant, first + i)) };
}

/** True when the API answered 200 with every message Sent. */
export function allSent(answer: ApiAnswer, expected: number): boolean {
  if (answer.status !== 200) return false;
  const messages = (JSON.parse(answer.body) as { Messages?: { Status?: string }[] }).Messages ?? [];
  return messages.length === expected && messages.every((m) => m.Status === 'Sent');
}

/**
 * What a developer would write: one client with the SDK's defaults, one SendEmail per message.
 * Only the socket limit is raised (the SDK's default is 50), as anyone running a pool of 64
 * would, so that the sweep compares pools and not socket queues.
 */
export function directSes(endpoint: string, region: string) {
  const client = new SESv2Client({
    region,
    endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: { httpAgent: { keepAlive: true, maxSockets: 256 } },
  });
  const send = async (tenant: Tenant, n: number): Promise<string> => {
    const m = benchMessage(tenant, n);
    const result = await client.send(
      new SendEmailCommand({
        FromEmailAddress: m.From,
        Destination: { ToAddresses: m.To },
        Content: {
          Simple: {
            Subject: { Data: m.Subject, Charset: 'UTF-8' },
            Body: { Text: { Data: m.TextContent, Charset: 'UTF-8' } },
            ...(tenant.attachment && {
              Attachments: [{ FileName: 'receipt.pdf', RawContent: tenant.attachment, ContentType: 'application/pdf', ContentDisposition: 'ATTACHMENT', ContentTransferEncoding: 'BASE64' }],
            }),
          },
        },
      }),
    );
    if (!result.MessageId) throw new Error('SES answered without a MessageId');
    return result.MessageId;
  };
  return {
    send,
    /** The hand-written pool: `limit` workers taking the next message until none is left. */
    async pool(tenant: Tenant, count: number, limit: number): Promise<void> {
      let next = 0;
      const worker = async () => {
        while (next < count) await send(tenant, next++);
      };
      await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
    },
    async sequential(tenant: Tenant, count: number): Promise<void> {
      for (let n = 0; n < count; n++) await send(tenant, n);
    },
    close: () => client.destroy(),
  };
}
