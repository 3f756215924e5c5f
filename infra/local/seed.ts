/**
 * The demo tenant of the local stack: an Organization, a member with a key, and `example.com` as
 * sender domain, created through the same admin store the command line uses.
 *
 * The key is stored only as a hash, like every key, so to print a working `curl` on later
 * starts the plain demo key is kept in `<data dir>/demo.json` (owner-only, gitignored with the
 * rest of `.local/`). That is acceptable for a throwaway key on a laptop emulator and nowhere
 * else; in memory mode nothing is written and a fresh demo is seeded on every start.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { hashApiKey } from '../../functions/shared/domain/api-keys';
import { RecordConflictError, RecordNotFoundError } from '../admin/admin-store';
import type { DynamoDbAdminStore } from '../admin/admin-store';
import { isCanonicalUuid } from '../../functions/shared/domain/uuid';

export const DEMO_SENDER_DOMAIN = 'example.com';
const DEMO_ORGANIZATION_NAME = 'Demo Organization';
const DEMO_USER_EMAIL = 'demo@example.com';

export interface DemoTenant {
  readonly organizationId: string;
  readonly userId: string;
  readonly userEmail: string;
  readonly senderDomain: string;
  readonly apiKey: string;
}

/** Where the demo lives: a different table or DynamoDB means a different demo. */
export interface DemoScope {
  readonly tableName: string;
  /** `embedded` for the stack's own dynalite, else the external endpoint. */
  readonly dynamodb: string;
}

interface DemoFile extends DemoTenant, DemoScope {
  readonly createdAt: string;
}

export type DemoState =
  | { readonly status: 'created' | 'reused'; readonly demo: DemoTenant }
  /** The saved demo exists but no longer works as printed (key rotated or revoked, membership or sender removed). */
  | { readonly status: 'broken'; readonly demo: DemoTenant; readonly reason: string };

export const demoFilePath = (dataDir: string) => join(dataDir, 'demo.json');

export async function seedDemo(admin: DynamoDbAdminStore): Promise<DemoTenant> {
  const organization = await admin.createOrganization({ name: DEMO_ORGANIZATION_NAME });
  let user;
  try {
    user = await admin.createUser({ email: DEMO_USER_EMAIL });
  } catch (error) {
    // The data outlived its demo.json (deleted by hand): a second demo user needs its own address.
    if (!(error instanceof RecordConflictError)) throw error;
    user = await admin.createUser({ email: `demo+${randomBytes(3).toString('hex')}@example.com` });
  }
  await admin.addMember(organization.id, user.id);
  await admin.addSender(organization.id, { domain: DEMO_SENDER_DOMAIN });
  const { key } = await admin.generateKey(user.id);
  return { organizationId: organization.id, userId: user.id, userEmail: user.email, senderDomain: DEMO_SENDER_DOMAIN, apiKey: key };
}

/** Why the saved demo would not work as printed, or undefined when it would. */
async function checkDemo(admin: DynamoDbAdminStore, demo: DemoTenant): Promise<string | undefined> {
  const user = await admin.getUser(demo.userId);
  if (user.keyHash !== hashApiKey(demo.apiKey)) return 'its key was rotated or revoked';
  const organization = await admin.getOrganization(demo.organizationId);
  if (!organization.members.includes(demo.userId)) return 'its user is no longer a member of the Organization';
  if (!organization.senders.includes(demo.senderDomain)) return `${demo.senderDomain} is no longer a sender identity of the Organization`;
  return undefined;
}

async function readDemoFile(path: string, scope: DemoScope): Promise<DemoTenant | undefined> {
  let parsed: Partial<DemoFile>;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<DemoFile>;
  } catch {
    return undefined; // missing or unreadable: seed again
  }
  const { organizationId, userId, userEmail, senderDomain, apiKey } = parsed;
  if (parsed.tableName !== scope.tableName || parsed.dynamodb !== scope.dynamodb) return undefined;
  if (!isCanonicalUuid(organizationId) || !isCanonicalUuid(userId) || typeof apiKey !== 'string') return undefined;
  if (typeof userEmail !== 'string' || typeof senderDomain !== 'string') return undefined;
  return { organizationId, userId, userEmail, senderDomain, apiKey };
}

async function writeDemoFile(path: string, scope: DemoScope, demo: DemoTenant): Promise<void> {
  const file: DemoFile = { ...demo, ...scope, createdAt: new Date().toISOString() };
  await writeFile(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  await chmod(path, 0o600); // `mode` applies only when the file is created
}

/**
 * The demo for this start: the saved one if it still exists, else a new one (saved when
 * `dataDir` is given). A saved demo that no longer works is reported, never silently re-keyed:
 * the operator may have revoked that key on purpose.
 */
export async function ensureDemo(admin: DynamoDbAdminStore, scope: DemoScope, dataDir: string | undefined): Promise<DemoState> {
  if (dataDir !== undefined) {
    const saved = await readDemoFile(demoFilePath(dataDir), scope);
    if (saved) {
      try {
        const reason = await checkDemo(admin, saved);
        return reason ? { status: 'broken', demo: saved, reason } : { status: 'reused', demo: saved };
      } catch (error) {
        // The data was wiped while demo.json stayed: seed a new demo below.
        if (!(error instanceof RecordNotFoundError)) throw error;
      }
    }
  }
  const demo = await seedDemo(admin);
  if (dataDir !== undefined) await writeDemoFile(demoFilePath(dataDir), scope, demo);
  return { status: 'created', demo };
}

/** A POSIX-shell word: single-quoted, with embedded single quotes closed, escaped and reopened. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The shell variables the quickstart's commands read, as `export` lines to paste into another
 * shell: whatever the port, and in memory mode too, where nothing is written to disk to read back.
 */
export function exportLines(apiUrl: string, demo: Pick<DemoTenant, 'apiKey' | 'organizationId'> | undefined): string {
  const lines = [`export BASE_URL=${shellQuote(apiUrl)}`];
  if (demo) lines.push(`export API_KEY=${shellQuote(demo.apiKey)}`, `export ORGANIZATION_ID=${shellQuote(demo.organizationId)}`);
  return lines.join('\n');
}

/**
 * The first message, for sh, bash and zsh, exactly as the README's quickstart prints it: it reads
 * `BASE_URL`, `API_KEY` and `ORGANIZATION_ID` from the `export` lines above, so the same text
 * works on any port and with any demo. The demo's sender domain is always `example.com`.
 */
export const QUICKSTART_CURL = [
  `curl -sS "$BASE_URL/v1.2/email/send" \\`,
  `  -H "Authorization: Bearer $API_KEY" \\`,
  `  -H 'Content-Type: application/json' \\`,
  `  -d '{"OrganizationId": "'"$ORGANIZATION_ID"'", "Messages": [{"From": "hello@${DEMO_SENDER_DOMAIN}", "To": ["you@example.org"], "Subject": "Hello from the local stack", "TextContent": "It works."}]}'`,
].join('\n');
