/**
 * What a client generated from openapi.json (openapi-typescript, as `npm run typecheck` runs it)
 * must and must not accept. Not a Jest suite: `tsc` checks it, and each `@ts-expect-error` fails
 * the type-check when the line under it stops being an error, so a document that makes the
 * generated types looser or stricter than the service breaks CI.
 */
import type { CancelRequest, paths, ScheduledResult, Schemas, ScheduleStatus } from '../support/api-client';

type SendOperation = paths['/v1.2/email/send']['post'];
type SendBody = SendOperation['requestBody']['content']['application/json'];

const ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
const message: Schemas['Message'] = { From: 'noreply@example.com', To: ['alice@example.org'], Subject: 'Hi', TextContent: 'Body' };

/** The request body: Messages, and an Organization id in one spelling or both. */
export const requestBodies: SendBody[] = [
  { OrganizationId: ORG, Messages: [message] },
  { organizationId: ORG, Messages: [message] },
  { OrganizationId: ORG, organizationId: ORG, Messages: [message] },
  { OrganizationId: null, organizationId: ORG, Messages: [message] },
  // @ts-expect-error Messages is required.
  { OrganizationId: ORG },
  // @ts-expect-error An Organization id is required, in either spelling.
  { Messages: [message] },
  // @ts-expect-error null counts as absent, so it is not the one Organization id.
  { OrganizationId: null, Messages: [message] },
];

type HeadersOf<Status extends keyof SendOperation['responses']> = SendOperation['responses'][Status]['headers'];
const firstTime = { 'X-Request-Id': '3f9a1c2e-7b4d-4e8a-9c1f-2d6b8e0a5c47', 'Cache-Control': 'no-store' } as const;

/** A first answer carries no Idempotent-Replayed (a generated header type must not require it); a replay carries "true". */
export const resultHeaders: [HeadersOf<200>, HeadersOf<207>, HeadersOf<429>, HeadersOf<502>, HeadersOf<200>] = [
  firstTime,
  firstTime,
  { ...firstTime, 'Retry-After': 1 },
  firstTime,
  { ...firstTime, 'Idempotent-Replayed': 'true' },
];

type OpenApiDocument = paths['/openapi.json']['get']['responses'][200]['content']['application/json'];

/** GET /openapi.json: the members its schema requires are typed, not only `openapi`. */
export function describeDocument(document: OpenApiDocument): string {
  return `${document.info.title} ${document.info.version} (OpenAPI ${document.openapi}): ${Object.keys(document.paths).join(', ')}`;
}

/** HEAD on the send path: a 405 whose generated type has no body to read. */
export const headRefusalContent: paths['/v1.2/email/send']['head']['responses'][405]['content'] = undefined;

/** The Message's section 12 fields: what the generated client takes, and what it refuses. */
export const contentFields: Schemas['Message'][] = [
  {
    ...message,
    ReplyTo: ['help@example.com'],
    Headers: { 'List-Unsubscribe': '<mailto:u@example.com>' },
    Tags: { invoice: 'inv-42' },
    Attachments: [{ FileName: 'a.pdf', Content: 'JVBERi0=' }, { FileName: 'logo.png', Content: 'AAAA', ContentType: 'image/png', ContentId: 'logo' }],
  },
  { ...message, ReplyTo: null, Headers: null, Tags: null, Attachments: null },
  // @ts-expect-error An attachment needs its Content.
  { ...message, Attachments: [{ FileName: 'a.pdf' }] },
  // @ts-expect-error Header values are strings.
  { ...message, Headers: { 'X-Count': 1 } },
  // @ts-expect-error Tags are an object, not a list.
  { ...message, Tags: [{ Name: 'a', Value: 'b' }] },
];

/** Tags come back on every message of the status answer. */
export const statusTags: Schemas['MessageStatus']['Tags'] = { invoice: 'inv-42' };

/** Scheduled send: SendAt on a message, the Scheduled result, the cancel body, ScheduleIds in a status request. */
export const scheduledMessage: Schemas['Message'] = { ...message, SendAt: '2026-12-01 08:00:00' };
export const scheduledResult: Schemas['MessageResult'] = { Index: 0, Status: 'Scheduled', ScheduleId: '3b241101-e2bb-4255-8caf-4136c566a962' } satisfies ScheduledResult;
// @ts-expect-error A Scheduled result carries its ScheduleId.
export const scheduledWithoutId: ScheduledResult = { Index: 0, Status: 'Scheduled' };
export const cancelBodies: CancelRequest[] = [
  { OrganizationId: ORG, ScheduleIds: ['3b241101-e2bb-4255-8caf-4136c566a962'] },
  // @ts-expect-error ScheduleIds is required.
  { OrganizationId: ORG },
];
export const statusBySchedule: paths['/v1.2/email/status']['post']['requestBody']['content']['application/json'] = { OrganizationId: ORG, ScheduleIds: ['3b241101-e2bb-4255-8caf-4136c566a962'] };
export const cancelled: ScheduleStatus = { ScheduleId: '3b241101-e2bb-4255-8caf-4136c566a962', Status: 'Cancelled', SendAt: '2026-12-01 08:00:00', Recipients: [] };
