/**
 * Test mode in AWS (docs/keys.md). A test key's messages are sent by the same functions as live
 * ones (the send and scheduled-send functions), but the choice is made before any mailer is: a
 * test message goes to the test mailer, which holds no SES client and whose only way out is the
 * events queue, where it puts the events SES's mailbox simulator would publish. This grants that
 * way out, and nothing else: no SES action, no other queue.
 */
import type { Role } from 'aws-cdk-lib/aws-iam';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { Queue } from 'aws-cdk-lib/aws-sqs';

export function allowTestModeEvents(senders: readonly { readonly fn: LambdaFunction; readonly role: Role }[], eventsQueue: Queue): void {
  for (const { fn, role } of senders) {
    fn.addEnvironment('SES_EVENTS_QUEUE_URL', eventsQueue.queueUrl);
    role.addToPolicy(new PolicyStatement({ sid: 'TestModeEvents', actions: ['sqs:SendMessage'], resources: [eventsQueue.queueArn] }));
  }
}
