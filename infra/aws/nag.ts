/**
 * cdk-nag AwsSolutions findings that are deliberate. Each is scoped to the one construct it
 * concerns, and the infra tests pin the exact list, so a new one needs a reviewed change.
 */
import { Validations } from 'aws-cdk-lib';
import type { HttpApi, HttpRoute } from 'aws-cdk-lib/aws-apigatewayv2';
import type { UserPool } from 'aws-cdk-lib/aws-cognito';
import type { ManagedPolicy, Role } from 'aws-cdk-lib/aws-iam';
import { SEND_PATH } from '../../functions/send/route';
import { API_ROUTES } from '../../functions/shared/http/api-routes';

const STATUS_PATH = API_ROUTES.status.path;

export interface NagSubjects {
  readonly api: HttpApi;
  /** The routes whose function checks an API key itself (send, status). */
  readonly apiKeyRoutes: HttpRoute[];
  readonly sendRole: Role;
  /** The scheduled-send function's role: it sends as the send function does. */
  readonly fireRole: Role;
  /** Roles, and the operator's policy, that act on the schedules of the stack's schedule group (by a wildcard on the schedule names). */
  readonly scheduleRoles: (Role | ManagedPolicy)[];
  /** The stack's schedule group (a name CDK generated at synth). */
  readonly scheduleGroupName: string;
  readonly tracing: boolean;
  readonly pageRoutes: HttpRoute[];
  readonly userPool: UserPool | undefined;
  /** Roles whose only wildcard is X-Ray's, present when tracing is on. */
  readonly tracedRoles: Role[];
  /** The operator's SES-tenant policy, when tenants are on. */
  readonly tenantAdministration: ManagedPolicy | undefined;
}

const X_RAY_REASON =
  'Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions ' +
  'and only write trace data; turn tracing off with the "tracing" context key to drop them.';

const TENANTS = 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:tenant/org-*]';
const TENANTS_REASON =
  'The Organizations\' SES tenants are made by the admin CLI as Organizations are created, so their ARNs cannot be listed ' +
  'in advance; the wildcard is limited to this account and region and to the service\'s own tenant names (org-<Organization id>).';

export function acknowledgeNagFindings({ api, apiKeyRoutes, sendRole, fireRole, scheduleRoles, scheduleGroupName, tracing, pageRoutes, userPool, tracedRoles, tenantAdministration }: NagSubjects): void {
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
      `404/405 problem documents and sends nothing; the routes that act (POST ${SEND_PATH}, POST ${STATUS_PATH}, POST ${API_ROUTES.cancel.path}, and those under ${API_ROUTES.templates.path}) require ` +
      'an API key, and those of the settings API a token checked by the JWT authorizer.',
  });
  for (const role of [sendRole, fireRole]) {
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]`,
      reason:
        'ses:SendEmail is checked against the sender identity, which each request chooses from its Organization\'s ' +
        'allowed senders (managed in DynamoDB with the admin CLI, checked by the function before sending). The wildcard ' +
        'is limited to identities of this account and region, the only action is ses:SendEmail, and SES refuses ' +
        'identities that are not verified.',
    });
    if (tenantAdministration) {
      Validations.of(role).acknowledge({ id: TENANTS, reason: `ses:SendEmail names the sending Organization's tenant. ${TENANTS_REASON}` });
    }
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'ses:GetAccount (read the account\'s MaxSendRate, the budget sends are paced to) has no resource type in SES, ' +
        'so "*" is the only resource it takes; it reads account settings and nothing else.' +
        (tracing ? ` ${X_RAY_REASON}` : ''),
    });
  }
  if (tenantAdministration) {
    Validations.of(tenantAdministration).acknowledge({ id: TENANTS, reason: TENANTS_REASON });
    Validations.of(tenantAdministration).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]',
      reason:
        'sender add creates the sender\'s SES identity when it is missing (with its MAIL FROM domain), reads its verification, and ' +
        'associates it with the Organization\'s tenant; which identities an Organization uses is the operator\'s choice at that ' +
        'moment. Only those identity and association actions take identities, in this account and region.',
    });
  }
  for (const role of scheduleRoles) {
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${scheduleGroupName}/*]`,
      reason:
        'Each scheduled message gets a one-time schedule named by its ScheduleId, made when it is sent and deleted ' +
        'after it ran (or when it is cancelled), so the names cannot be listed in advance. The wildcard covers the ' +
        'schedules of the stack\'s own schedule group only, and each role has only the actions it needs there ' +
        '(scheduler:CreateSchedule for the send and scheduled-send functions, scheduler:DeleteSchedule for the cancel and settings API functions ' +
        'and the operator\'s admin CLI).',
    });
  }
  for (const route of pageRoutes) {
    Validations.of(route).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'The settings page\'s static files (HTML, CSS, JS, and config.json naming the public OpenID issuer and client id) ' +
        'must load before anyone has signed in, and the problem type pages (/problems) explain errors to any client; ' +
        'they hold no secret and the function behind them has no AWS access. ' +
        'Everything the page does goes through /v1.2/me, which has the JWT authorizer.',
    });
  }
  if (userPool) {
    Validations.of(userPool).acknowledge({
      id: 'AwsSolutions-COG2',
      reason:
        'MFA is optional (TOTP, offered at sign-in) rather than required: the pool signs users in to one page that shows ' +
        'their own API key, every user is invited by the operator (self sign-up is off), and passwords must be 12+ ' +
        'characters of four kinds. Teams that want it required can set it on the pool or bring their own issuer (oidcIssuer).',
    });
    const essentials =
      'Threat protection (advanced security) needs the Cognito Plus feature plan, priced per monthly active user; the ' +
      'pool uses the Essentials plan, self sign-up is off, and users are invited by the operator.';
    Validations.of(userPool).acknowledge({ id: 'AwsSolutions-COG8', reason: essentials });
  }
  if (tracing) {
    for (const traced of tracedRoles) Validations.of(traced).acknowledge({ id: 'AwsSolutions-IAM5[Resource::*]', reason: X_RAY_REASON });
  }
}
