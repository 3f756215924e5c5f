/**
 * CDK app entry (`cdk.json` runs it with tsx). Settings come from CDK context; see
 * infra/aws/settings.ts and docs/deploy.md.
 */
import { App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readSettings, SettingsError } from './settings';
import { EmailSendApiStack, SERVICE_NAME } from './stack';

const app = new App();

/** The settings, or the message naming what is wrong with them and exit 1: a stack trace would only bury it. */
function settingsOrExit(): ReturnType<typeof readSettings> {
  try {
    return readSettings(app);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}

const { stackName } = settingsOrExit();

new EmailSendApiStack(app, 'EmailSendApi', {
  stackName,
  description: 'Transactional email API: HTTP API, send function, DynamoDB table, SES configuration set',
});
Tags.of(app).add('service', SERVICE_NAME);

// cdk-nag 3 runs as a policy-validation plugin rather than an Aspect: any unacknowledged
// AwsSolutions finding stops `cdk synth` and `cdk deploy` with a report. The acknowledgements and
// their reasons are also written into the template's Metadata (by an Aspect the pack adds), so a
// reviewer of the deployed template sees them without the source.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true }));
