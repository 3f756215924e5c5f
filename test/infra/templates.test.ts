/**
 * Templates in the stack (CONTRACT section 14): the templates routes of the same HTTP API, each
 * to the templates function with no authorizer (the function checks the API key), and exactly
 * what each role may do with templates: the templates function reads and writes the `TPL#`
 * partitions and nothing else of the table beyond the access records every key endpoint reads;
 * the send function and the settings API only read them.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { partitions, readKeyHoldersStatement, recordKeyUseStatement, synthesised } from './support';

type Json = Record<string, any>;

let parts: ReturnType<typeof synthesised>;
beforeAll(() => {
  parts = synthesised();
});

function policyOf(role: string): Json[] {
  const policies = Object.values(parts.template.findResources('AWS::IAM::Policy')).filter((p) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: parts.logicalIdOf(role) }]));
  expect(policies).toHaveLength(1);
  return policies[0]!.Properties.PolicyDocument.Statement;
}

describe('the templates routes', () => {
  it.each(['GET /v1.2/templates', 'GET /v1.2/templates/{Name}', 'PUT /v1.2/templates/{Name}', 'DELETE /v1.2/templates/{Name}', 'POST /v1.2/templates/{Name}/render'])(
    '%s goes to the templates function, with no authorizer',
    (routeKey) => {
      const routes = Object.values(parts.template.findResources('AWS::ApiGatewayV2::Route')).filter((r) => r.Properties.RouteKey === routeKey);
      expect(routes).toHaveLength(1);
      expect(routes[0]!.Properties.AuthorizationType).toBe('NONE');
      const integrationId = routes[0]!.Properties.Target['Fn::Join'][1][1].Ref as string;
      expect(parts.resources[integrationId]!.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', IntegrationUri: { 'Fn::GetAtt': [parts.id(parts.stack.templatesFunction), 'Arn'] } });
    },
  );

  it('tells the function its table, and outputs the templates URL', () => {
    expect(parts.resources[parts.id(parts.stack.templatesFunction)]!.Properties.Environment.Variables).toMatchObject({ TABLE_NAME: { Ref: parts.id(parts.stack.table) } });
    expect(JSON.stringify(parts.template.toJSON().Outputs.TemplatesUrl.Value)).toContain('v1.2/templates');
  });
});

describe('what the roles may do with templates', () => {
  it('templates function: access records, key holders, key use, and the TPL# partitions; nothing else', () => {
    const statements = policyOf('TemplatesFunctionRole').filter((s) => s.Sid !== 'WriteOwnLogs' && s.Sid !== undefined);
    expect(statements).toEqual([
      { Sid: 'ReadAccessRecords', Effect: 'Allow', Action: 'dynamodb:BatchGetItem', Resource: parts.table(), Condition: partitions('KEY#*', 'ORG#*') },
      readKeyHoldersStatement(parts.table()),
      recordKeyUseStatement(parts.table()),
      {
        Sid: 'Templates',
        Effect: 'Allow',
        Action: ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
        Resource: parts.table(),
        Condition: partitions('TPL#*'),
      },
    ]);
  });

  it('send function: reads template versions, never writes them', () => {
    const statements = policyOf('SendFunctionRole');
    expect(statements.find((s) => s.Sid === 'ReadTemplates')).toEqual({ Sid: 'ReadTemplates', Effect: 'Allow', Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'], Resource: parts.table(), Condition: partitions('TPL#*') });
    const touchingTemplates = statements.filter((s) => JSON.stringify(s.Condition ?? {}).includes('TPL#'));
    expect(touchingTemplates.map((s) => s.Sid)).toEqual(['ReadTemplates']);
  });

  it('settings API (the page\'s Templates panel): lists and reads them, never writes them', () => {
    const statements = policyOf('SettingsApiFunctionRole').filter((s) => JSON.stringify(s.Condition ?? {}).includes('TPL#'));
    expect(statements).toEqual([{ Sid: 'ReadTemplates', Effect: 'Allow', Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'], Resource: parts.table(), Condition: partitions('TPL#*') }]);
  });

  it('no role but the templates function\'s writes the TPL# partitions', () => {
    const writes = /^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem)$/;
    const writers = Object.values(parts.template.findResources('AWS::IAM::Policy')).filter((policy) =>
      (policy.Properties.PolicyDocument.Statement as Json[]).some((s) => JSON.stringify(s.Condition ?? {}).includes('TPL#') && [s.Action].flat().some((action: string) => writes.test(action))),
    );
    expect(writers.map((policy) => policy.Properties.Roles)).toEqual([[{ Ref: parts.logicalIdOf('TemplatesFunctionRole') }]]);
  });
});
