/**
 * Child process of `npm run bench`: the local stack (the API in front of the very handler module
 * Lambda runs), wired to the emulators child's proxies. The handler's logs and metrics are
 * written as in Lambda, to this process's stdout, which the benchmark sends to a log file.
 * More stacks can be started on request, each with its own service settings (the concurrency sweep).
 */
import type { LocalStack } from '../infra/local/stack';
import { startLocalStack } from '../infra/local/stack';
import { serveParent } from './child';

export interface StackInfo {
  readonly sendUrl: string;
  readonly tableName: string;
  readonly apiKey: string;
  readonly organizationId: string;
  readonly senderDomain: string;
  readonly serviceEnv: Readonly<Record<string, string>>;
}

const dynamodbEndpoint = required('BENCH_CHILD_DYNAMODB_ENDPOINT');
const sesEndpoint = required('BENCH_CHILD_SES_ENDPOINT');
const stacks = new Map<string, LocalStack>();

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set; this module runs as a child of the benchmark (npm run bench)`);
  return value;
}

async function start(serviceEnv: Readonly<Record<string, string>>): Promise<StackInfo> {
  const stack = await startLocalStack({
    port: 0,
    oidcPort: 0,
    data: 'memory',
    dynamodbEndpoint,
    sesEndpoint,
    serviceEnv,
  });
  if (!stack.demo) throw new Error(`the local stack has no working demo tenant: ${stack.demoProblem ?? 'unknown reason'}`);
  stacks.set(stack.sendUrl, stack);
  return {
    sendUrl: stack.sendUrl,
    tableName: stack.tableName,
    apiKey: stack.demo.apiKey,
    organizationId: stack.demo.organizationId,
    senderDomain: stack.demo.senderDomain,
    serviceEnv,
  };
}

const first = await start(JSON.parse(required('BENCH_CHILD_SERVICE_ENV')) as Record<string, string>);

serveParent(
  first,
  {
    startStack: (serviceEnv: Record<string, string>) => start(serviceEnv),
    async stopStack(sendUrl: string): Promise<void> {
      await stacks.get(sendUrl)?.stop();
      stacks.delete(sendUrl);
    },
  },
  async () => {
    for (const stack of stacks.values()) await stack.stop();
  },
);
