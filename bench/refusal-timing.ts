/**
 * How long a 403 takes with the auth cache on, for an Organization this instance used recently
 * and for one it never saw (security audit round 2, finding 7: 2.8 ms against 6 ms let a caller
 * with any valid key tell which Organizations were in use). Runs the real stores against dynalite
 * on 127.0.0.1 and prints the medians and their ratio; times are not asserted anywhere (the
 * machine is shared and noisy), this is for a person to read.
 *
 *   npx tsx bench/refusal-timing.ts [rounds]
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { authenticate, authoriseOrganization } from '../functions/shared/auth/caller';
import { createDynamoDbClient } from '../functions/shared/runtime/clients';
import { CachedAccessStore } from '../functions/shared/store/cached-access-store';
import { DynamoDbAccessStore } from '../functions/shared/store/dynamodb-access-store';
import { DynamoDbAdminStore } from '../infra/admin/admin-store';
import { ensureTable, startDynamoDb } from '../infra/local/emulators';
import { median } from './stats';

const ROUNDS = Number(process.argv[2] ?? 400);
const TABLE = 'refusal-timing';

async function main(): Promise<void> {
  process.env.AWS_ACCESS_KEY_ID = 'local';
  process.env.AWS_SECRET_ACCESS_KEY = 'local';
  const dynamo = await startDynamoDb();
  try {
    await ensureTable(new DynamoDBClient({ region: 'us-east-1', endpoint: dynamo.endpoint }), TABLE);
    const documents = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: dynamo.endpoint });
    const admin = new DynamoDbAdminStore(documents, TABLE);
    const tenant = async () => {
      const organization = await admin.createOrganization({ name: 'Org' });
      const user = await admin.createUser({ email: `${randomUUID()}@timing.example.net` });
      await admin.addMember(organization.id, user.id);
      return { organizationId: organization.id, key: (await admin.generateKey(user.id)).key };
    };
    const [prober, victim] = [await tenant(), await tenant()];
    const store = new CachedAccessStore(new DynamoDbAccessStore(documents, TABLE), { ttlSeconds: 60 });
    const caller = await authenticate(prober.key, store);

    const refusalMs = async (organizationId: string): Promise<number> => {
      const started = process.hrtime.bigint();
      await authoriseOrganization(caller, organizationId, store).then(
        () => {
          throw new Error('expected a 403');
        },
        (error: { status?: number }) => {
          if (error.status !== 403) throw error;
        },
      );
      return Number(process.hrtime.bigint() - started) / 1e6;
    };

    const used: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 50; i++) await refusalMs(randomUUID()); // warm-up
    for (let i = 0; i < ROUNDS; i++) {
      // The victim's Organization is in this instance's cache: its own member just used it.
      await authoriseOrganization(await authenticate(victim.key, store), victim.organizationId, store);
      used.push(await refusalMs(victim.organizationId));
      unknown.push(await refusalMs(randomUUID()));
    }
    const [a, b] = [median(used), median(unknown)];
    process.stdout.write(
      `403 medians over ${ROUNDS} rounds, auth cache on:\n` +
        `  recently used Organization  ${a.toFixed(3)} ms\n` +
        `  unknown Organization        ${b.toFixed(3)} ms\n` +
        `  ratio used/unknown          ${(a / b).toFixed(2)}\n`,
    );
    documents.destroy();
  } finally {
    await dynamo.close();
  }
}

await main();
