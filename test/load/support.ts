/**
 * The local stack as a client sees it: started in-process on free ports, in memory, with the
 * auth cache on (as deployed) and the demo tenant seeded.
 */
import { afterAll, beforeAll } from '@jest/globals';
import type { LocalStack } from '../../infra/local/stack';
import { startLocalStack } from '../../infra/local/stack';

export function useLocalStack(receive: (stack: LocalStack) => void): void {
  let stack: LocalStack | undefined;
  beforeAll(async () => {
    // Without the mailbox simulator: in AWS, SES events are recorded by other functions on their
    // own capacity; here they would share this process and dynalite with the send path under load.
    stack = await startLocalStack({ port: 0, dynamodbPort: 0, sesPort: 0, oidcPort: 0, data: 'memory', mailboxSimulator: false, serviceEnv: { AUTH_CACHE_SECONDS: '30' }, log: () => undefined });
    receive(stack);
  }, 60_000);
  afterAll(async () => stack?.stop());
}
