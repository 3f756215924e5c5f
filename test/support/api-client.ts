/**
 * The API as a generated client sees it: types from openapi.json (`openapi-types.d.ts`, written
 * by `npm run typecheck` and ignored by git), calls through `openapi-fetch`. A test that sends
 * or reads through this client stops type-checking when the document drifts from what the test
 * does, and every answer it gets is also checked against the document at run time.
 *
 * Only type imports come from the generated file: Jest (swc) erases them, so `npm test` runs
 * from a fresh clone before the types exist.
 */
import type { Client } from 'openapi-fetch';
import createClient from 'openapi-fetch';
import type { components, paths } from './openapi-types';
import { checkedFetch } from './openapi';

export type { components, paths } from './openapi-types';
export type Schemas = components['schemas'];
export type SendRequest = Schemas['SendRequest'];
export type Message = Schemas['Message'];
/** Scheduled send (CONTRACT section 13): a Scheduled result, the cancel request and answer, a schedule's status. */
export type ScheduledResult = Schemas['ScheduledResult'];
export type CancelRequest = Schemas['CancelRequest'];
export type CancelResults = Schemas['CancelResults'];
export type ScheduleStatus = Schemas['ScheduleStatus'];

export type ApiClient = Client<paths>;

/** A client of the API at `baseUrl` (a local stack's `apiUrl`), calling as a given API key. */
export function apiClient(baseUrl: string, apiKey?: string): ApiClient {
  return createClient<paths>({
    baseUrl,
    fetch: checkedFetch,
    headers: apiKey === undefined ? {} : { Authorization: `Bearer ${apiKey}` },
  });
}
