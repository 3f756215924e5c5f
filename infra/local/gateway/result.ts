/**
 * Writing answers: the handler's result as API Gateway writes it, and plain JSON for the
 * gateway's own pages.
 */
import type { ServerResponse } from 'node:http';
import type { APIGatewayProxyResultV2 } from 'aws-lambda';

/**
 */
export function writeResult(res: ServerResponse, result: APIGatewayProxyResultV2 | undefined | void): void {
  const structured = typeof result === 'object' && result !== null && 'statusCode' in result && typeof result.statusCode === 'number';
  if (!structured) {
    const body = result === undefined ? '' : typeof result === 'string' ? result : JSON.stringify(result);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  const body = result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, String(value));
  if (result.cookies?.length) res.setHeader('Set-Cookie', result.cookies);
  res.setHeader('Content-Length', body.length);
  res.statusCode = result.statusCode ?? 200;
  res.end(body);
}

/** A JSON page of the gateway's own (the readiness index), readable in a terminal. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value, null, 2);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(body);
}
