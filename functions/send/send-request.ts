/**
 * One send request, start to finish: who is calling, is the body valid, may they send in that
 * Organization from those addresses, then send and decide the status. Plain function; the
 * middy chain in `handler.ts` is its HTTP face.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Config } from '../shared/config';
import type { Mailer } from '../shared/mail/ports';
import type { AccessStore } from '../shared/store/ports';
import { authenticate, authoriseOrganization, authoriseSenders, readBearerToken } from './authorisation';
import { decideOutcome } from './outcome';
import { sendMessages } from './sending';
import { peekOrganizationId, validateSendRequest } from './validation';

export interface SendDependencies {
  readonly config: Config;
  readonly access: AccessStore;
  readonly mailer: Mailer;
  readonly logger: Logger;
  readonly now: () => number;
}

export interface SendInput {
  readonly authorization: string | undefined;
  readonly body: unknown;
  readonly requestId: string;
  /** Epoch milliseconds by which sending must be over. */
  readonly deadline: number;
}

export async function handleSendRequest(input: SendInput, deps: SendDependencies): Promise<APIGatewayProxyStructuredResultV2> {
  const started = deps.now();
  const apiKey = readBearerToken(input.authorization);
  const caller = await authenticate(apiKey, peekOrganizationId(input.body), deps.access);
  const request = validateSendRequest(input.body, deps.config);
  const organization = authoriseOrganization(caller);
  authoriseSenders(request.messages, organization);

  const results = await sendMessages(request.messages, {
    organizationId: request.organizationId,
    mailer: deps.mailer,
    concurrency: deps.config.sendConcurrency,
    deadline: input.deadline,
    now: deps.now,
  });
  const outcome = decideOutcome(results);

  deps.logger.info('send request finished', {
    requestId: input.requestId,
    organizationId: request.organizationId,
    userId: caller.userId,
    messages: results.length,
    sent: results.filter((r) => r.Status === 'Sent').length,
    expired: results.filter((r) => r.Status === 'Expired').length,
    failed: results.filter((r) => r.Status === 'Failed').length,
    statusCode: outcome.statusCode,
    latencyMs: deps.now() - started,
  });

  return {
    statusCode: outcome.statusCode,
    headers: {
      ...outcome.headers,
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      'X-Request-Id': input.requestId,
    },
    body: JSON.stringify({ OrganizationId: request.organizationIdAsSent, Messages: results }),
  };
}
