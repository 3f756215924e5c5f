/**
 * Builds the stack the way `cdk synth` does: the same context as cdk.json (settings and feature
 * flags), plus per-test overrides.
 */
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { EmailSendApiStack } from '../../infra/stack';

interface CdkJson {
  readonly app: string;
  readonly context: Record<string, unknown>;
}

export const CDK_JSON: CdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'));

export interface BuildOptions {
  /** Run esbuild for the function asset (about a second); otherwise CDK stages a placeholder. */
  readonly bundle?: boolean;
}

export function buildStack(context: Record<string, unknown> = {}, options: BuildOptions = {}) {
  const app = new App({
    context: {
      ...CDK_JSON.context,
      ...context,
      ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }),
    },
  });
  const stack = new EmailSendApiStack(app, 'EmailSendApi');
  return { app, stack };
}
