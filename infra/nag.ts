/**
 * cdk-nag AwsSolutions findings that are deliberate. Each is scoped to the one construct it
 * concerns, and the infra tests pin the exact list, so a new one needs a reviewed change.
 */
import { Validations } from 'aws-cdk-lib';
import type { HttpApi, HttpRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Role } from 'aws-cdk-lib/aws-iam';
import { SEND_PATH } from '../functions/send/route';

/** `apiKeyRoutes`: the routes whose function checks an API key itself (send, status). */
export function acknowledgeNagFindings(api: HttpApi, apiKeyRoutes: HttpRoute[], role: Role, tracing: boolean, lifecycleRoles: readonly Role[] = []): void {
  // The delivery lifecycle's functions (status, events, webhooks) name every resource they touch;
  // only active tracing adds a statement without one.
  if (tracing) {
    for (const traced of lifecycleRoles) {
      Validations.of(traced).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level ' +
          'permissions and only write trace data; every other statement of this role names its table partitions, queue ' +
          'or key. Turn tracing off with the "tracing" context key to drop them.',
      });
    }
  }
  const unauthenticatedRoute =
    'Authentication is the service\'s own: every request must carry "Authorization: Bearer <API key>", which the ' +
    'function checks against SHA-256 hashes in DynamoDB before it looks at the body or sends or reads anything, and ' +
    'answers 401/403 otherwise (CONTRACT section 3). An API Gateway authorizer would repeat that lookup on a second ' +
    'Lambda and add latency without adding a check.';
  for (const route of apiKeyRoutes) {
    Validations.of(route).acknowledge({ id: 'AwsSolutions-APIG4', reason: unauthenticatedRoute });
  }
  const defaultRoute = api.node.findChild('DefaultRoute');
  Validations.of(defaultRoute).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason:
      'The $default route only exists so that unknown paths and methods reach the function, which answers them with ' +
      `404/405 problem documents and sends nothing; the one route that acts, POST ${SEND_PATH}, requires an API key.`,
  });
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]`,
    reason:
      'ses:SendEmail is checked against the sender identity, which each request chooses from its Organization\'s ' +
      'allowed senders (managed in DynamoDB with the admin CLI, checked by the function before sending). The wildcard ' +
      'is limited to identities of this account and region, the only action is ses:SendEmail, and SES refuses ' +
      'identities that are not verified.',
  });
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'ses:GetAccount (read the account\'s MaxSendRate, the budget sends are paced to) has no resource type in SES, ' +
      'so "*" is the only resource it takes; it reads account settings and nothing else.' +
      (tracing
        ? ' Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which likewise support no ' +
          'resource-level permissions and only write trace data; turn tracing off with the "tracing" context key to drop them.'
        : ''),
  });
}
