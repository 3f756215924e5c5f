/**
 * A small recording HTTP proxy in front of the SES emulator, for the SES-tenant calls (CONTRACT
 * section 11 item 4): it records every request, answers the tenant and reputation-policy
 * operations itself as SES v2 does (the emulator knows none of them), and forwards everything
 * else (SendEmail) to the emulator unchanged.
 */
import { createServer, request } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  readonly method: string;
  readonly path: string;
  readonly body: Record<string, any>;
}

export interface RecordingSesProxy {
  readonly endpoint: string;
  readonly calls: RecordedCall[];
  /** The SES v2 operation of each call, by its REST path. */
  operations(): string[];
  close(): Promise<void>;
}

const ACCOUNT = '123456789012';

function operationOf(method: string, path: string): string {
  if (path === '/v2/email/tenants') return 'CreateTenant';
  if (path === '/v2/email/tenants/get') return 'GetTenant';
  if (path === '/v2/email/tenants/delete') return 'DeleteTenant';
  if (path === '/v2/email/tenants/resources') return 'CreateTenantResourceAssociation';
  if (path === '/v2/email/tenants/resources/delete') return 'DeleteTenantResourceAssociation';
  if (method === 'PUT' && /^\/v2\/email\/reputation\/entities\/RESOURCE\/arn:.+\/policy$/.test(path)) return 'UpdateReputationEntityPolicy';
  if (path === '/v2/email/outbound-emails') return 'SendEmail';
  return `${method} ${path}`;
}

function answer(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  res.writeHead(status, { 'content-type': 'application/json', ...(errorType && { 'x-amzn-errortype': errorType }) });
  res.end(JSON.stringify(body));
}

/** `answerTenants: false` forwards the tenant calls too, to an upstream that does not know them. */
export async function startRecordingSesProxy(upstream: string, options: { readonly region?: string; readonly answerTenants?: boolean } = {}): Promise<RecordingSesProxy> {
  const { region = 'us-east-1', answerTenants = true } = options;
  const calls: RecordedCall[] = [];
  const tenants = new Map<string, { arn: string; associations: Set<string> }>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
      let body: Record<string, any> = {};
      try {
        body = raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as Record<string, any>) : {};
      } catch {
        body = {};
      }
      const method = req.method ?? 'GET';
      calls.push({ method, path, body });
      const tenant = tenants.get(String(body.TenantName));
      switch (answerTenants ? operationOf(method, path) : 'forward') {
        case 'CreateTenant': {
          if (tenant) return answer(res, 400, { message: `Tenant ${body.TenantName} already exists` }, 'AlreadyExistsException');
          const arn = `arn:aws:ses:${region}:${ACCOUNT}:tenant/${body.TenantName}/tn-${tenants.size + 1}`;
          tenants.set(String(body.TenantName), { arn, associations: new Set() });
          return answer(res, 200, { TenantName: body.TenantName, TenantId: `tn-${tenants.size}`, TenantArn: arn, SendingStatus: 'ENABLED' });
        }
        case 'GetTenant':
          if (!tenant) return answer(res, 404, { message: 'no such tenant' }, 'NotFoundException');
          return answer(res, 200, { Tenant: { TenantName: body.TenantName, TenantArn: tenant.arn, SendingStatus: 'ENABLED' } });
        case 'CreateTenantResourceAssociation':
          if (!tenant) return answer(res, 404, { message: 'no such tenant' }, 'NotFoundException');
          if (tenant.associations.has(body.ResourceArn)) return answer(res, 400, { message: 'already associated' }, 'AlreadyExistsException');
          tenant.associations.add(body.ResourceArn);
          return answer(res, 200, {});
        case 'DeleteTenant':
          // SES removes the tenant's associations with it.
          if (!tenants.delete(String(body.TenantName))) return answer(res, 404, { message: 'no such tenant' }, 'NotFoundException');
          return answer(res, 200, {});
        case 'DeleteTenantResourceAssociation':
          if (!tenant?.associations.delete(body.ResourceArn)) return answer(res, 404, { message: 'no such association' }, 'NotFoundException');
          return answer(res, 200, {});
        case 'UpdateReputationEntityPolicy':
          return answer(res, 200, {});
        default: {
          const forwarded = request(`${upstream}${req.url ?? '/'}`, { method, headers: { ...req.headers, host: new URL(upstream).host } }, (upstreamRes) => {
            res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
            upstreamRes.pipe(res);
          });
          forwarded.on('error', () => answer(res, 502, { message: 'upstream unreachable' }));
          forwarded.end(raw);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    operations: () => calls.map((call) => operationOf(call.method, call.path)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
