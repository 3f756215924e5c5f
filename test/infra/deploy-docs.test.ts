/**
 * docs/deploy.md describes the stack as it is: its table of parts names as many routes,
 * functions and alarms as the template holds, every route key, and the other parts; its Mermaid
 * diagram has a node for each function. A part added to the stack fails this until the page says so.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Template } from 'aws-cdk-lib/assertions';
import { buildStack } from './support';

const page = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
const partsTable = page.slice(page.indexOf('| Part | What |'), page.indexOf('\n\n', page.indexOf('| Part | What |')));
const diagram = /```mermaid\n([\s\S]*?)```/.exec(page)?.[1] ?? '';

/** The first cell of the parts table's row for a part, e.g. `9 routes` for `routes`. */
function statedCount(part: string): number {
  const row = new RegExp(`^\\| (\\d+) ${part} \\|`, 'm').exec(partsTable);
  expect([part, row]).toEqual([part, expect.anything()]);
  return Number(row![1]);
}

let template: Template;
beforeAll(() => {
  template = Template.fromStack(buildStack().stack);
});

describe('docs/deploy.md, "What the stack holds"', () => {
  it('counts the routes, functions and alarms the template holds', () => {
    const count = (type: string) => Object.keys(template.findResources(type)).length;
    expect({ routes: statedCount('routes'), functions: statedCount('functions'), alarms: statedCount('alarms') }).toEqual({
      routes: count('AWS::ApiGatewayV2::Route'),
      functions: count('AWS::Lambda::Function'),
      alarms: count('AWS::CloudWatch::Alarm'),
    });
  });

  it('names every route key', () => {
    const keys = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map((route) => route.Properties.RouteKey as string);
    expect(keys.filter((key) => !partsTable.includes(`\`${key}\``))).toEqual([]);
  });

  it('has a row for each other kind of part, and a diagram with every function', () => {
    const parts = [...partsTable.matchAll(/^\| ([^|]+?) \|/gm)].map(([, part]) => part);
    const present: Record<string, string> = {
      'AWS::ApiGatewayV2::Api': 'HTTP API',
      'AWS::DynamoDB::Table': 'DynamoDB table',
      'AWS::SES::ConfigurationSet': 'SES configuration sets',
      'AWS::Events::Rule': 'EventBridge rule',
      'AWS::SQS::Queue': 'SQS queues',
      'AWS::KMS::Key': 'KMS key',
      'AWS::Cognito::UserPool': 'Cognito user pool',
    };
    for (const [type, part] of Object.entries(present)) {
      expect([type, Object.keys(template.findResources(type)).length > 0]).toEqual([type, true]);
      expect(parts).toContain(part);
    }
    const functionNodes = [...diagram.matchAll(/\["[^"]*function"\]/g)];
    expect(functionNodes).toHaveLength(Object.keys(template.findResources('AWS::Lambda::Function')).length);
  });
});
