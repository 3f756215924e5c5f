import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { REPO_ROOT } from '../../infra/aws/send-bundle';

/**
 * `npx cdk synth` exactly as a newcomer runs it, through cdk.json and the app entry (so the
 * cdk-nag plugin registered there runs too), with no AWS credentials and a Docker that cannot
 * start: it has to work offline, on local esbuild, in seconds.
 */
describe('cdk synth (CLI)', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-synth-'));

  afterAll(() => {
    rmSync(outdir, { recursive: true, force: true });
  });

  it('synthesises offline without credentials or Docker, bundling with local esbuild', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, CDK_DOCKER: '/bin/false', CI: 'true' };
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_REGION', 'AWS_DEFAULT_REGION']) {
      delete env[name];
    }
    const started = Date.now();
    const result = spawnSync('npx', ['cdk', 'synth', '--quiet', '--output', outdir], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 110_000 });
    const elapsed = Date.now() - started;
    const output = `${result.stdout}\n${result.stderr}`;
    console.info(`cdk synth took ${elapsed} ms`);

    expect({ status: result.status, output: result.status === 0 ? '' : output }).toEqual({ status: 0, output: '' });
    expect(output).toContain('Bundling asset EmailSendApi/SendFunction/Code/Stage');
    expect(output).not.toMatch(/docker/i);

    const templatePath = join(outdir, 'EmailSendApi.template.json');
    expect(existsSync(templatePath)).toBe(true);
    const template = JSON.parse(readFileSync(templatePath, 'utf8'));
    const functions = Object.values(template.Resources as Record<string, { Type: string; Metadata?: Record<string, unknown> }>).filter(
      (r) => r.Type === 'AWS::Lambda::Function',
    );
    // send, status, events, webhook delivery, the settings API and the settings page, scheduled send,
    // cancel and templates: each bundled by the local esbuild.
    expect(functions).toHaveLength(9);
    for (const fn of functions) expect(fn.Metadata?.['aws:asset:is-bundled']).toBe(true);
    // The app registered cdk-nag (its acknowledgements are in the template, with reasons), and
    // neither it nor CloudFormation's own schema check reported anything.
    const acknowledged = Object.values(template.Resources as Record<string, { Metadata?: { cdk_nag?: { rules_to_suppress: { id: string }[] } } }>)
      .flatMap((r) => r.Metadata?.cdk_nag?.rules_to_suppress ?? [])
      .map((rule) => rule.id);
    expect(new Set(acknowledged)).toEqual(
      new Set([
        'AwsSolutions-APIG4',
        'AwsSolutions-COG2',
        'AwsSolutions-COG8',
        'AwsSolutions-IAM5[Resource::*]',
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]',
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:tenant/org-*]',
        expect.stringMatching(/^AwsSolutions-IAM5\[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule\/EmailSendApi-ScheduleGroup-[0-9A-F]{8}\/\*\]$/),
      ]),
    );
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8'));
    expect(report.pluginReports).toEqual([]);
  }, 120_000);

  it('stops on an invalid setting with one line naming the context key, and no stack trace', () => {
    // The app entry as cdk.json runs it, given context the way the CLI hands `-c maxScheduleDays=999` over.
    const result = spawnSync('npx', ['tsx', 'infra/aws/app.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify({ maxScheduleDays: '999' }), CDK_OUTDIR: outdir },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe('Invalid CDK context: context "maxScheduleDays" (MAX_SCHEDULE_DAYS) must be a whole number from 1 to 365, got "999"');
  }, 70_000);

  // cfn-lint checks every resource against CloudFormation's own schemas, including the SES
  // configuration sets' tracking and VDM options, which no emulator here deploys (moto's
  // CloudFormation has no AWS::SES types). Needs cfn-lint (pip install cfn-lint): skipped with a
  // warning on a laptop without it; under CI=true, where every machine has it, a failure instead.
  const cfnLint = spawnSync('sh', ['-c', 'command -v cfn-lint'], { encoding: 'utf8' }).status === 0;
  const lintTest = cfnLint || process.env.CI === 'true' ? it : it.skip;
  if (!cfnLint && process.env.CI !== 'true') console.warn('skipped the cfn-lint check: cfn-lint is not on the PATH (pip install cfn-lint)');
  lintTest('passes cfn-lint with no error or warning, the four SES configuration sets included', () => {
    expect(cfnLint).toBe(true);
    const templatePath = join(outdir, 'EmailSendApi.template.json');
    if (!existsSync(templatePath)) throw new Error('no template: the synth test above failed');
    // Only informational findings (I…) may remain: errors (E…) and warnings (W…) fail, but for
    // W3005: the CDK writes a function's DependsOn its role beside the GetAtt on purpose (the
    // role's policy must exist before the function), which cfn-lint calls redundant.
    const result = spawnSync('cfn-lint', ['--format', 'parseable', '--ignore-checks', 'W3005', '--', templatePath], { encoding: 'utf8', timeout: 110_000 });
    const findings = `${result.stdout}`.split('\n').filter((line) => /:[EW]\d{4}:/.test(line));
    expect({ findings, stderr: result.status === 0 ? '' : result.stderr.trim() }).toEqual({ findings: [], stderr: '' });
  }, 120_000);
});
