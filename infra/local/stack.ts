/**
 * The whole service on a laptop: dynalite, the SES emulator and the API, with the same handler
 * module that Lambda runs. `start.ts` is the command-line face of `startLocalStack`; tests call
 * it directly, on port 0.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoDbClient, httpHandler } from '../../functions/shared/runtime/clients';
import type { Instrument } from '../../functions/shared/runtime/clients';
import { loadConfig } from '../../functions/shared/runtime/config';
import { createDependencies } from '../../functions/send/dependencies';
import { createHandler } from '../../functions/send/handler';
import { SEND_PATH } from '../../functions/send/route';
import { DynamoDbAdminStore } from '../admin/admin-store';
import { tenantsFor } from '../admin/ses-tenants';
import { closeServer, ensureTable, listening, startDynamoDb } from './emulators';
import { startLocalSes } from './ses-rate-gate';
import type { SentListener } from './ses-rate-gate';
import { startLocalLifecycle } from './lifecycle';
import { startLocalScheduledSend } from './local-scheduler';
import { CANCEL_PATH } from '../../functions/cancel/handler';
import { DynamoDbScheduleStore } from '../../functions/shared/schedules/schedule-store';
import { STATUS_PATH } from '../../functions/status/handler';
import { TEMPLATE_ROUTES } from '../../functions/shared/http/api-routes';
import { createTemplateDependencies } from '../../functions/templates/dependencies';
import { createTemplateHandler, TEMPLATES_PATH } from '../../functions/templates/handler';
import type { RunningService } from './emulators';
import type { DemoState, DemoTenant } from './seed';
import { ensureDemo, exportLines } from './seed';
import type { LambdaHandler } from './gateway/server';
import { createApiServer } from './gateway/server';
import { SETTINGS_PAGE_PATH, settingsRoutes, startLocalSignIn } from './sign-in';
import { LocalStackError, claimPort, describeStoreFault, displayPath, lockDataDir } from './start-guards';

export { LocalStackError, PortUnavailableError, displayPath } from './start-guards';
import { DEFAULT_DATA_DIR, DEFAULT_PORTS, LOCAL_TABLE_NAME, LOOPBACK, endpointFrom, localTableName, maxSendRateFrom, portFrom, regionFrom, placeholderCredentials } from './settings';

export interface LocalStackOptions {
  /** API port; 0 picks a free one. Defaults: 3000, 8000, 8005. */
  readonly port?: number;
  readonly dynamodbPort?: number;
  readonly sesPort?: number;
  /** The embedded OpenID provider the settings page signs in with (default 8010). */
  readonly oidcPort?: number;
  /** `memory` keeps nothing on disk and seeds a fresh demo on every start. */
  readonly data?: 'disk' | 'memory';
  /** Where dynalite's files and demo.json live in disk mode (default `<repo>/.local`). */
  readonly dataDir?: string;
  /** Use this DynamoDB / SES instead of starting an emulator. */
  readonly dynamodbEndpoint?: string;
  readonly sesEndpoint?: string;
  /** The function timeout the local gateway gives the handler (default 29 s, API Gateway's). */
  readonly functionTimeoutMs?: number;
  /** Enforce this send rate (recipients/s) in front of the embedded SES emulator, as SES does. */
  readonly sesMaxSendRate?: number | undefined;
  readonly tableName?: string;
  readonly region?: string;
  /** Play SES's mailbox simulator (default true); the load tests turn it off to load the send path alone. */
  readonly mailboxSimulator?: boolean;
  /** Multiplies the webhook retry delays (tests shrink them); 1 is the schedule used in AWS. */
  readonly webhookRetryScale?: number;
  /** Service settings for the handler (MAX_MESSAGES, AUTH_CACHE_SECONDS, ...), as in Lambda. */
  readonly serviceEnv?: Readonly<Record<string, string>>;
  /** Progress lines and the access log. */
  readonly log?: (line: string) => void;
}

export interface LocalStack {
  /** e.g. http://127.0.0.1:3000 */
  readonly apiUrl: string;
  readonly sendUrl: string;
  /** The self-service settings page, and the OpenID provider it signs in with. */
  readonly settingsUrl: string;
  readonly oidcIssuer: string;
  readonly statusUrl: string;
  readonly cancelUrl: string;
  /** The SES endpoint in use; with the stack's own emulator, also its web viewer. */
  readonly sesUrl: string;
  readonly viewerUrl: string | undefined;
  readonly dynamodbEndpoint: string;
  readonly tableName: string;
  readonly dataDir: string | undefined;
  /** The demo tenant, with the `export` lines the quickstart's commands read (undefined when it would not work). */
  readonly demo: (DemoTenant & { readonly status: 'created' | 'reused'; readonly exports: string }) | undefined;
  /** Why the saved demo no longer works, when it does not. */
  readonly demoProblem: string | undefined;
  stop(): Promise<void>;
}

/** `npm start`'s options from its environment (see docs/local.md for each variable). */
export function optionsFromEnv(env: Readonly<Record<string, string | undefined>>): LocalStackOptions {
  const data = env.LOCAL_DATA?.trim();
  if (data && data !== 'memory' && data !== 'disk') throw new LocalStackError(`LOCAL_DATA must be "memory" or "disk", got "${data}"`);
  return {
    port: portFrom(env, 'PORT'),
    dynamodbPort: portFrom(env, 'DYNAMODB_PORT'),
    sesPort: portFrom(env, 'SES_PORT'),
    oidcPort: portFrom(env, 'OIDC_PORT'),
    data: data === 'memory' ? 'memory' : 'disk',
    ...(env.LOCAL_DATA_DIR?.trim() && { dataDir: env.LOCAL_DATA_DIR.trim() }),
    dynamodbEndpoint: endpointFrom(env, 'DYNAMODB_ENDPOINT'),
    sesEndpoint: endpointFrom(env, 'SES_ENDPOINT'),
    sesMaxSendRate: maxSendRateFrom(env),
    tableName: localTableName(env),
    region: regionFrom(env),
  };
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const log = options.log ?? (() => undefined);
  const memory = options.data === 'memory';
  const dataDir = memory ? undefined : (options.dataDir ?? DEFAULT_DATA_DIR);
  const tableName = options.tableName ?? LOCAL_TABLE_NAME;
  const region = options.region ?? regionFrom(process.env);
  const external = { dynamodb: options.dynamodbEndpoint, ses: options.sesEndpoint };

  const cleanups: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };

  try {
    // Ports first, so a taken one fails fast and before any data is touched. Until the handler
    // is in place the API answers 503, and `GET /` says it is not ready.
    let index: Record<string, unknown> = {};
    // The service's settings, from variables of the same names as in Lambda, read once: by the
    // handler and by the gateway's own answers alike (a malformed one stops the start here). A
    // local operator expects `key revoke` to bite at once, so the auth cache is off unless asked for.
    const serviceConfig = loadConfig({ AUTH_CACHE_SECONDS: '0', ...process.env, ...options.serviceEnv, TABLE_NAME: tableName, AWS_REGION: region });
    const api = createApiServer({ region, index: () => index, log, ...(options.functionTimeoutMs && { timeoutMs: options.functionTimeoutMs }), serviceMaxBodyBytes: serviceConfig.maxBodyBytes, problemTypeBase: serviceConfig.problemTypeBase });
    const apiPort = await claimPort(options.port ?? DEFAULT_PORTS.PORT, 'PORT', () => listening(api.server, options.port ?? DEFAULT_PORTS.PORT));
    cleanups.push(() => closeServer(api.server));
    const apiUrl = `http://${LOOPBACK}:${apiPort}`;

    if (dataDir) await mkdir(dataDir, { recursive: true });
    let dynamodbEndpoint: string;
    if (external.dynamodb) {
      dynamodbEndpoint = external.dynamodb;
      log(`DynamoDB  ${dynamodbEndpoint} (DYNAMODB_ENDPOINT)`);
    } else {
      const dynamodbPath = dataDir === undefined ? undefined : join(dataDir, 'dynamodb');
      if (dataDir && dynamodbPath) {
        await mkdir(dynamodbPath, { recursive: true });
        cleanups.push(await lockDataDir(dataDir));
      }
      const port = options.dynamodbPort ?? DEFAULT_PORTS.DYNAMODB_PORT;
      const dynamo: RunningService = await claimPort(port, 'DYNAMODB_PORT', () =>
        startDynamoDb({ port, ...(dynamodbPath && { path: dynamodbPath }) }),
      );
      cleanups.push(() => dynamo.close());
      dynamodbEndpoint = dynamo.endpoint;
      log(`DynamoDB  ${dynamodbEndpoint} (dynalite, ${dynamodbPath ? `data in ${displayPath(dynamodbPath)}` : 'in memory'})`);
    }

    let sesUrl: string;
    let viewerUrl: string | undefined;
    let emulator: string | undefined;
    // Marks the service's own sends, so that only they feed the mailbox simulator (ses-rate-gate.ts).
    let ownSends: Instrument | undefined;
    // The mailbox simulator is wired once the table exists; the front hands it every send from then on.
    let simulate: SentListener | undefined;
    // Likewise the tracking endpoint's Open and Click events, into the same events queue.
    let engaged: ((event: Record<string, unknown>) => void) | undefined;
    if (external.ses) {
      sesUrl = external.ses;
      log(`SES       ${sesUrl} (SES_ENDPOINT)`);
    } else {
      const port = options.sesPort ?? DEFAULT_PORTS.SES_PORT;
      const ses = await claimPort(port, 'SES_PORT', () =>
        startLocalSes({ port, region, maxSendRate: options.sesMaxSendRate, onSent: (request, answer, sentAt) => simulate?.(request, answer, sentAt), onEngagement: (event) => engaged?.(event) }),
      );
      cleanups.push(() => ses.close());
      sesUrl = ses.endpoint;
      emulator = ses.upstream;
      ownSends = ses.ownSends;
      viewerUrl = `${ses.endpoint}/`;
      log(`SES       ${sesUrl} (${ses.description})`);
    }

    const oidcPort = options.oidcPort ?? DEFAULT_PORTS.OIDC_PORT;
    const provider = await claimPort(oidcPort, 'OIDC_PORT', () => startLocalSignIn({ apiUrl, port: oidcPort }));
    cleanups.push(() => provider.close());
    log(`Sign-in   ${provider.issuer} (local OpenID provider for the settings page)`);

    const credentials = placeholderCredentials(process.env, [dynamodbEndpoint, sesUrl]);

    // Timeouts of its own: an endpoint that never answers fails the start instead of holding it.
    const tableClient = new DynamoDBClient({ region, endpoint: dynamodbEndpoint, maxAttempts: 2, requestHandler: httpHandler(2_000, 5_000), ...(credentials && { credentials }) });
    const documents = createDynamoDbClient({ region, dynamodbEndpoint }, { credentials });
    let demoState: DemoState;
    try {
      const table = await ensureTable(tableClient, tableName);
      log(`Table     ${tableName} (${table})`);
      demoState = await ensureDemo(
        new DynamoDbAdminStore(documents, tableName),
        { tableName, dynamodb: external.dynamodb ?? 'embedded' },
        dataDir,
      );
    } catch (error) {
      throw describeStoreFault(error, dynamodbEndpoint, external.dynamodb !== undefined) ?? error;
    } finally {
      tableClient.destroy();
      documents.destroy();
    }

    // With SES tenants the demo Organization gets its tenant too, from the SES endpoint in use (as the admin CLI would).
    if (serviceConfig.sesTenants && demoState.status === 'created') {
      const target = { tableName, region, endpoint: dynamodbEndpoint, local: true };
      const tenants = tenantsFor(target, { ...process.env, SES_TENANTS: 'true', SES_ENDPOINT: sesUrl }, log);
      await tenants
        ?.ensure(demoState.demo.organizationId, [demoState.demo.senderDomain])
        .catch((error: unknown) => log(`SES tenant of the demo Organization not made: ${(error as Error).message}`))
        .finally(() => tenants.destroy());
    }

    const config = { ...serviceConfig, dynamodbEndpoint, sesEndpoint: sesUrl };
    // Secrets are sealed with the local sealing key (docs/local.md): LOCAL_SEALING_KEY, or the file
    // beside the data, read from the same variables the service's settings came from.
    const sealingEnv: Record<string, string | undefined> = { ...process.env, ...options.serviceEnv, ...(dataDir && { LOCAL_DATA_DIR: dataDir }) };
    const lifecycle = startLocalLifecycle({ config, credentials, emulator, sealingEnv, webhookRetryScale: options.webhookRetryScale, log });
    cleanups.push(() => lifecycle.stop());
    const scheduled = startLocalScheduledSend({ config, credentials, ownSends, outbox: lifecycle.webhookQueue, testEvents: lifecycle.testEvents, log });
    cleanups.push(() => scheduled.stop());
    // The webhook queue too: a send refused for a paused SES tenant pauses the Organization and tells its webhook.
    const handler = createHandler(createDependencies(config, { credentials, ...(ownSends && { instrument: ownSends }) }, scheduled.parts));
    // Schedules stored before a restart (data on disk) are armed again; one whose time passed meanwhile fires now.
    const scheduleReader = createDynamoDbClient({ region, dynamodbEndpoint }, { credentials });
    try {
      const resumed = await scheduled.scheduler.resume(new DynamoDbScheduleStore(scheduleReader, tableName));
      if (resumed > 0) log(`Schedules ${resumed} scheduled message${resumed === 1 ? '' : 's'} waiting, armed again`);
    } finally {
      scheduleReader.destroy();
    }
    // Only the stack's own emulator is watched: with an external SES_ENDPOINT there is no simulator.
    if (emulator && options.mailboxSimulator !== false) simulate = lifecycle.simulate;
    engaged = lifecycle.publishEvent;
    const sendUrl = `${apiUrl}${SEND_PATH}`;
    const settingsUrl = `${apiUrl}${SETTINGS_PAGE_PATH}`;
    const statusUrl = `${apiUrl}${STATUS_PATH}`;
    const cancelUrl = `${apiUrl}${CANCEL_PATH}`;
    index = {
      service: 'email-send-api (local)',
      endpoints: [
        { method: 'POST', url: sendUrl },
        { method: 'POST', url: statusUrl },
        { method: 'POST', url: cancelUrl },
        { method: 'GET', url: `${apiUrl}${TEMPLATES_PATH}` },
      ],
      settingsPage: settingsUrl,
      ...(viewerUrl && { mailViewer: viewerUrl }),
      dynamodb: dynamodbEndpoint,
      table: tableName,
    };
    // API keys are sealed as webhook secrets are; in memory and with no key given, with a key that
    // lives as long as the (equally unsaved) table does.
    const settingsEnv = dataDir || sealingEnv.LOCAL_SEALING_KEY?.trim() ? sealingEnv : { ...sealingEnv, LOCAL_SEALING_KEY: randomBytes(32).toString('base64') };
    // The templates function, one route per method and path as in the HTTP API.
    const templates = createTemplateHandler(createTemplateDependencies(config, { credentials })) as unknown as LambdaHandler;
    const templateRoutes = TEMPLATE_ROUTES.flatMap((route) => route.methods.map((method) => ({ method, path: route.path, handler: templates, functionName: 'email-send-api-templates-local' })));
    api.setHandler(handler as unknown as LambdaHandler, [lifecycle.statusRoute, scheduled.cancelRoute, ...templateRoutes, ...settingsRoutes({ provider, store: config, credentials, env: settingsEnv, scheduling: scheduled.parts })]);

    const demo = demoState.status === 'broken' ? undefined : { ...demoState.demo, status: demoState.status, exports: exportLines(apiUrl, demoState.demo) };
    return {
      apiUrl,
      sendUrl,
      settingsUrl,
      oidcIssuer: provider.issuer,
      statusUrl,
      cancelUrl,
      sesUrl,
      viewerUrl,
      dynamodbEndpoint,
      tableName,
      dataDir,
      demo,
      demoProblem: demoState.status === 'broken' ? demoState.reason : undefined,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
