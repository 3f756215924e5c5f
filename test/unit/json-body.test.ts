/**
 * The body readers (functions/shared/http/middleware/json-body.ts) in a middy chain of their own:
 * the checks before the parse, @middy/http-json-body-parser doing the parse, the scans of the
 * kept text after it, and the parser's own errors turned into this service's problem documents.
 * The send endpoint's hostile-input suites cover the same rules through the whole handler.
 */
import { describe, expect, it } from '@jest/globals';
import { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { JsonEvent } from '../../functions/shared/http/middleware/json-body';
import { MAX_NESTING_DEPTH, bodyLimits, jsonBody } from '../../functions/shared/http/middleware/json-body';
import { problemResponses } from '../../functions/shared/http/middleware/problem-responses';
import type { EventOptions } from '../support/events';
import { httpApiEvent, lambdaContext } from '../support/events';

const logger = new Logger({ serviceName: 'json-body-test', logLevel: 'SILENT' });

/** Answers 200 with what the handler was given: the parsed body and the text it came from. */
const chain = middy<JsonEvent, APIGatewayProxyStructuredResultV2>()
  .use(problemResponses({ logger, typeBase: 'https://problems.test/' }))
  .use(bodyLimits({ maxBytes: 1_000 }))
  .use(jsonBody())
  .handler(async (event) => ({ statusCode: 200, body: JSON.stringify({ body: event.body, rawBody: event.rawBody }) }));

async function read(options: EventOptions) {
  const event = httpApiEvent({ headers: { 'content-type': 'application/json' }, ...options });
  const result = (await chain(event, lambdaContext())) as APIGatewayProxyStructuredResultV2;
  return { status: result.statusCode, body: JSON.parse(String(result.body)) as Record<string, unknown> };
}

function parseError(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${text} parses`);
}

describe('jsonBody', () => {
  it('hands the handler the parsed value, and the text it was parsed from', async () => {
    const text = '{"To":["a@example.org"],"n":[1,2,{"x":null}]}';
    expect(await read({ body: text })).toEqual({ status: 200, body: { body: JSON.parse(text), rawBody: text } });
  });

  it('turns the parser\'s error into the 400 malformed-json document with what JSON.parse said', async () => {
    const text = '{"Subject": "private words", ';
    const { status, body } = await read({ body: text });
    expect(status).toBe(400);
    expect(body).toMatchObject({ type: 'https://problems.test/malformed-json', status: 400, detail: `The request body is not valid JSON: ${parseError(text).slice(0, 200)}` });
  });

  it('admits the media types the service admits, which the parser\'s own pattern would refuse', async () => {
    for (const contentType of ['Application/JSON', 'application/json ; charset=UTF-8', 'application/json;']) {
      expect(await read({ headers: { 'content-type': contentType }, body: '{"a":1}' })).toMatchObject({ status: 200, body: { body: { a: 1 } } });
    }
  });

  it('decodes a base64 body strictly: a byte order mark is dropped, bytes that are not UTF-8 are refused', async () => {
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"Subject":"Grüße"}')]);
    expect(await read({ body: withBom.toString('base64'), isBase64Encoded: true })).toEqual({
      status: 200,
      body: { body: { Subject: 'Grüße' }, rawBody: '{"Subject":"Grüße"}' },
    });
    const notUtf8 = Buffer.from([...Buffer.from('{"Subject":"'), 0xff, 0xfe, ...Buffer.from('"}')]);
    expect(await read({ body: notUtf8.toString('base64'), isBase64Encoded: true })).toMatchObject({
      status: 400,
      body: { type: 'https://problems.test/malformed-json', detail: 'The request body is not valid UTF-8.' },
    });
  });

  it('says an empty body is empty, however it arrives', async () => {
    for (const options of [{}, { body: '' }, { body: ' \r\n\t' }, { body: Buffer.from('\ufeff ').toString('base64'), isBase64Encoded: true }]) {
      expect(await read(options)).toMatchObject({ status: 400, body: { type: 'https://problems.test/malformed-json', detail: 'The request body is empty; send a JSON object.' } });
    }
  });

  it('keeps "__proto__" an own key of the value, never its prototype', async () => {
    const { body } = await read({ body: '{"__proto__":{"polluted":true}}' });
    const value = body.body as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses nesting past the limit before it scans for duplicate keys', async () => {
    const deep = `${'['.repeat(MAX_NESTING_DEPTH)}{"a":1,"a":2}${']'.repeat(MAX_NESTING_DEPTH)}`;
    expect(await read({ body: deep })).toMatchObject({ status: 400, body: { type: 'https://problems.test/malformed-json', detail: expect.stringContaining(`${MAX_NESTING_DEPTH} levels`) } });
    const atLimit = `${'['.repeat(MAX_NESTING_DEPTH - 1)}{"a":1}${']'.repeat(MAX_NESTING_DEPTH - 1)}`;
    expect((await read({ body: atLimit })).status).toBe(200);
  });

  it('names every duplicate key by its pointer on the kept text', async () => {
    const { status, body } = await read({ body: '{"Messages":[{"To":[],"To":[]},{"a~b":1,"a~b":2}],"Messages":[]}' });
    expect(status).toBe(400);
    expect(body.errors).toEqual([
      { pointer: '/Messages/0/To', detail: 'duplicate key: give each field once' },
      { pointer: '/Messages/1/a~0b', detail: 'duplicate key: give each field once' },
      { pointer: '/Messages', detail: 'duplicate key: give each field once' },
    ]);
  });
});
