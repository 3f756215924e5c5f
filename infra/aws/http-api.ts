/**
 * The HTTP API in front of the send function: the route, the `$default` catch-all, a stage with
 * throttling and access logs, and an optional custom domain. Created in the stack's own scope,
 * like the send function, so the logical IDs stay those of the first deployments.
 */
import type { Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { DomainName, HttpApi, HttpMethod, HttpStage, LogGroupLogDestination, SecurityPolicy } from 'aws-cdk-lib/aws-apigatewayv2';
import type { HttpRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { SEND_PATH } from '../../functions/send/route';
import { API_ROUTES } from '../../functions/shared/http/api-routes';
import type { StackSettings } from './settings';

export interface SendApi {
  readonly api: HttpApi;
  readonly stage: HttpStage;
  readonly sendRoutes: HttpRoute[];
  readonly statusRoutes: HttpRoute[];
  readonly cancelRoutes: HttpRoute[];
  readonly customDomain: DomainName | undefined;
}

/**
 * No request headers or body: the Authorization header must never reach a log. No path either:
 * a client that puts its key in the URL (`GET /v1.2/templates/tme_…`) would have it logged here,
 * where nothing can redact it. `routeKey` names the route; the functions' own `request finished`
 * lines hold the path, key-like text redacted, under the same `requestId`.
 */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  sourceIp: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  domainName: '$context.domainName',
  httpMethod: '$context.httpMethod',
  routeKey: '$context.routeKey',
  protocol: '$context.protocol',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  error: '$context.error.message',
};

export function addSendApi(stack: Stack, sendFunction: IFunction, settings: StackSettings, statusFunction: IFunction, cancelFunction: IFunction): SendApi {
  const accessLogs = new LogGroup(stack, 'ApiAccessLogs', { retention: settings.logRetention });
  const integration = new HttpLambdaIntegration('SendIntegration', sendFunction);
  // The HTTP API has no default stage of its own: the stage below carries throttling, access
  // logs and the custom domain, which the built-in default stage cannot.
  const api = new HttpApi(stack, 'HttpApi', {
    description: 'Transactional email API',
    createDefaultStage: false,
    // `$default` sends every other method and path to the same function, which answers 405
    // (with Allow) and 404 as problem documents. Without it, API Gateway would answer those
    // itself with a bare {"message":"Not Found"}, breaking the contract's error format.
    defaultIntegration: integration,
  });
  const sendRoutes = api.addRoutes({ path: SEND_PATH, methods: [HttpMethod.POST], integration });
  // Its other methods fall to `$default`, whose function answers them 405 from the same route table.
  const statusRoutes = api.addRoutes({ path: API_ROUTES.status.path, methods: [HttpMethod.POST], integration: new HttpLambdaIntegration('StatusIntegration', statusFunction) });
  const cancelRoutes = api.addRoutes({ path: API_ROUTES.cancel.path, methods: [HttpMethod.POST], integration: new HttpLambdaIntegration('CancelIntegration', cancelFunction) });

  const customDomain = settings.customDomain
    ? new DomainName(stack, 'CustomDomain', {
        domainName: settings.customDomain.domainName,
        certificate: Certificate.fromCertificateArn(stack, 'CustomDomainCertificate', settings.customDomain.certificateArn),
        securityPolicy: SecurityPolicy.TLS_1_2,
      })
    : undefined;

  const stage = new HttpStage(stack, 'DefaultStage', {
    httpApi: api,
    stageName: '$default',
    autoDeploy: true,
    throttle: settings.throttle,
    accessLogSettings: {
      destination: new LogGroupLogDestination(accessLogs),
      format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
    },
    ...(customDomain && { domainMapping: { domainName: customDomain } }),
  });
  return { api, stage, sendRoutes, statusRoutes, cancelRoutes, customDomain };
}
