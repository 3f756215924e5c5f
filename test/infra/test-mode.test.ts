/**
 * Test mode in the stack (docs/keys.md): the functions that send (send, scheduled-send) have one
 * way out for a test message, the events queue, and test mode grants nothing else: no SES action
 * beyond what live mail already had, no other queue. What reaches SES is decided in the code
 * before a mailer is chosen (test/integration/test-mode.test.ts shows a test send never touches
 * the SES mailer); this pins the permissions around that choice.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { synthesised } from './support';

type Json = Record<string, any>;

let parts: ReturnType<typeof synthesised>;
beforeAll(() => {
  parts = synthesised();
});

const statementsOf = (role: string): Json[] =>
  Object.values(parts.template.findResources('AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: parts.logicalIdOf(role) }]))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Json[]);
const actions = (statement: Json): string[] => [statement.Action].flat();

describe.each([
  ['send function', 'SendFunctionRole', 'SendFunction'],
  ['scheduled-send function', 'ScheduledSendFunctionRole', 'ScheduledSendFunction'],
])('test mode in the %s', (_, role, fn) => {
  it('may send to the SES events queue, and to no queue other than those live sending already used', () => {
    const eventsQueue = { 'Fn::GetAtt': [parts.logicalIdOf('SesEventsQueue'), 'Arn'] };
    expect(statementsOf(role).filter((s) => s.Sid === 'TestModeEvents')).toEqual([{ Sid: 'TestModeEvents', Effect: 'Allow', Action: 'sqs:SendMessage', Resource: eventsQueue }]);
    const queues = statementsOf(role).filter((s) => actions(s).includes('sqs:SendMessage')).map((s) => s.Sid).sort();
    expect(queues).toEqual(['QueueShortWaits', 'QueueWebhooks', 'TestModeEvents']);
  });

  it('is told the events queue, and gets no SES permission beyond GetAccount and SendEmail of live mail', () => {
    const variables = parts.resources[parts.logicalIdOf(fn)]!.Properties.Environment.Variables as Json;
    expect(variables.SES_EVENTS_QUEUE_URL).toEqual({ Ref: parts.logicalIdOf('SesEventsQueue') });
    const ses = statementsOf(role).filter((s) => actions(s).some((action) => action.startsWith('ses:')));
    expect(ses.map((s) => [s.Sid, actions(s)])).toEqual([
      ['ReadSendQuota', ['ses:GetAccount']],
      ['SendEmail', ['ses:SendEmail']],
    ]);
  });
});
