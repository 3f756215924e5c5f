/**
 * What a client generated from openapi.json (openapi-typescript, as `npm run typecheck` runs it)
 * must and must not accept. Not a Jest suite: `tsc` checks it, and each `@ts-expect-error` fails
 * the type-check when the line under it stops being an error, so a document that makes the
 * generated types looser or stricter than the service breaks CI.
 */
import type { paths, Schemas } from '../support/api-client';

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
