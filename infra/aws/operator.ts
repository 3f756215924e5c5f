/**
 * The operator's managed policy (`OperatorPolicy`), there whatever the settings: what the admin
 * CLI needs of the stack beyond its table to cancel scheduled messages as the cancel endpoint
 * does (infra/admin/cancelling.ts): delete their one-time schedules in the stack's group, and
 * queue their `email.cancelled` on the webhook queue (SQS-managed encryption, so no KMS grant).
 * With SES tenants on, TenantAdministrationPolicy (reputation.ts) adds the SES calls. Outputs: the
 * policy, and the webhook queue's URL the CLI reads as WEBHOOK_QUEUE_URL.
 */
import { CfnOutput } from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { ScheduledSend } from './scheduled-send';

export function addOperatorPolicy(stack: Stack, scheduledSend: Pick<ScheduledSend, 'schedulesArn'>, webhookQueue: Queue): ManagedPolicy {
  const policy = new ManagedPolicy(stack, 'OperatorPolicy', {
    description: 'Attach to the operator who runs the admin CLI against this stack: cancelled scheduled messages lose their timers and tell their webhooks at once',
    statements: [
      new PolicyStatement({ sid: 'DeleteSchedules', actions: ['scheduler:DeleteSchedule'], resources: [scheduledSend.schedulesArn] }),
      new PolicyStatement({ sid: 'QueueWebhooks', actions: ['sqs:SendMessage'], resources: [webhookQueue.queueArn] }),
    ],
  });
  new CfnOutput(stack, 'OperatorPolicyArn', {
    description: 'Managed policy the admin CLI needs to cancel scheduled messages at once (with WEBHOOK_QUEUE_URL and SCHEDULE_GROUP_NAME)',
    value: policy.managedPolicyArn,
  });
  new CfnOutput(stack, 'WebhookQueueUrl', {
    description: 'Webhook delivery queue; pass it to the admin CLI as WEBHOOK_QUEUE_URL (with SCHEDULE_GROUP_NAME) so its cancellations tell email.cancelled at once',
    value: webhookQueue.queueUrl,
  });
  return policy;
}
