/**
 * The Organization commands of CONTRACT section 11 beside `org create` (which lives in cli.ts):
 * `org limits` (its rate, daily quota and fair-share weight), `org tracking` (its default open and
 * click tracking, CONTRACT section 17), `org show` (the Organization, its limits and today's use
 * of its quota, its tracking, its reputation and whether it is paused), `org resume`
 * (lifts a pause) and `org tenants sync` (gives every Organization its SES tenant); plus the
 * help text of the SES-tenant steps `org create` and `sender add|remove` take. Apart from cli.ts,
 * which runs the command line (output, errors); what both share is in command-frame.ts.
 *
 * `org show` prints sections, each made by its own function from what it reads.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Command } from 'commander';
import type { OrganizationLimits } from '../../functions/shared/domain/org-limits';
import { DEFAULT_SCHEDULED, LIMIT_BOUNDS } from '../../functions/shared/domain/org-limits';
import type { Pause, Reputation } from '../../functions/shared/domain/reputation';
import type { Tracking } from '../../functions/shared/mail/tracking';
import { WINDOW_DAYS } from '../../functions/shared/domain/reputation';
import { DynamoDbReputationStore } from '../../functions/shared/store/dynamodb-reputation-store';
import { PAUSE_PROJECTION, readPause } from '../../functions/shared/store/organization-pause';
import { InvalidArgumentError, RecordNotFoundError } from '../../functions/shared/store/records';
import type { Organization } from '../../functions/shared/store/records';
import { PARTITIONS, itemKey } from '../../functions/shared/store/table';
import type { DynamoDbAdminStore } from './admin-store';
import type { Leaf } from './command-frame';
import { scanKind } from './directory-store';
import { OrganizationTrackingStore } from './tracking-store';

/** Where the tenant commands take their settings from (their --help). */
export const TENANT_HELP = [
  '',
  'SES tenants are on for a deployed table (--table) and off locally; SES_TENANTS=true|false decides either way.',
  'SES_ENDPOINT: where the calls go (locally default http://127.0.0.1:SES_PORT).',
  'SES_CONFIGURATION_SET: the base configuration set (stack output ConfigurationSetName; required with --table); it and its three tracked siblings (<name>-track-opens, -track-clicks, -track-opens-clicks) are associated.',
  'SES_TENANT_REPUTATION_POLICY: standard (default), strict or none (stack output TenantReputationPolicy).',
].join('\n');

/** One part of `org show`: its human lines and its fields of the JSON object. */
export interface Section {
  readonly lines: readonly string[];
  readonly json: Record<string, unknown>;
}

export function organizationSection(organization: Organization): Section {
  return {
    lines: [
      `Organization "${organization.name}" (${organization.id})`,
      `  members: ${organization.members.length > 0 ? organization.members.join(', ') : 'none'}`,
      `  senders: ${organization.senders.length > 0 ? organization.senders.join(', ') : 'none'}`,
    ],
    json: { id: organization.id, name: organization.name, members: organization.members, senders: organization.senders },
  };
}

/** A limit option: a number within its bounds, or 0 to remove it (`removable`). */
function limitOption(value: string | undefined, name: 'rate' | 'daily' | 'weight' | 'scheduled', removable: boolean): number | null | undefined {
  if (value === undefined) return undefined;
  const number = Number(value.trim());
  const { min, max } = LIMIT_BOUNDS[name];
  if (removable && number === 0 && value.trim() !== '') return null;
  const counted = name === 'daily' || name === 'scheduled';
  const whole = !counted || Number.isInteger(number);
  if (value.trim() === '' || !Number.isFinite(number) || number < min || number > max || !whole) {
    const kind = counted ? 'a whole number' : 'a number';
    throw new InvalidArgumentError(`--${name} must be ${kind} from ${min} to ${max}${removable ? ', or 0 to remove it' : ''}, got "${value}"`);
  }
  return number;
}

function describeLimits(limits: OrganizationLimits): string {
  return [
    limits.rate === undefined ? 'no rate of its own' : `rate ${limits.rate} recipients/s`,
    limits.daily === undefined ? 'no daily quota' : `daily quota ${limits.daily} recipients`,
    `weight ${limits.weight}`,
    ...(limits.scheduled === undefined ? [] : [`at most ${limits.scheduled} scheduled messages pending`]),
  ].join(', ');
}

function limitsJson(limits: OrganizationLimits): Record<string, unknown> {
  return { rate: limits.rate ?? null, daily: limits.daily ?? null, weight: limits.weight, scheduled: limits.scheduled ?? DEFAULT_SCHEDULED };
}

/** The Organization's limits and today's use of its daily quota (CONTRACT section 11 item 2). */
export function limitsSection(limits: OrganizationLimits, usage: { day: string; used: number }): Section {
  const remaining = limits.daily === undefined ? null : Math.max(0, limits.daily - usage.used);
  return {
    lines: [
      `  limits: ${describeLimits(limits)}`,
      limits.daily === undefined
        ? "  today: not counted (today's use is counted only while a daily quota is set)"
        : `  today (${usage.day} UTC): ${usage.used} of ${limits.daily} recipients used, ${remaining} left`,
    ],
    json: { limits: limitsJson(limits), usage: { day: usage.day, used: usage.used, remaining } },
  };
}

const SWITCH_VALUES: Readonly<Record<string, boolean>> = { on: true, off: false };

/** A tracking switch: `on` or `off`, or undefined when the option is not given. */
function switchOption(value: string | undefined, name: 'opens' | 'clicks'): boolean | undefined {
  if (value === undefined) return undefined;
  const on = SWITCH_VALUES[value.trim().toLowerCase()];
  if (on === undefined) throw new InvalidArgumentError(`--${name} must be on or off, got "${value}"`);
  return on;
}

const onOff = (on: boolean): string => (on ? 'on' : 'off');

/** The Organization's default open and click tracking, for messages that do not give `Tracking`. */
export function trackingSection(tracking: Tracking): Section {
  return {
    lines: [`  tracking (default for messages without Tracking): opens ${onOff(tracking.opens)}, clicks ${onOff(tracking.clicks)}`],
    json: { tracking: { opens: tracking.opens, clicks: tracking.clicks } },
  };
}

const percent = (rate: number): string => `${Number((rate * 100).toFixed(3))} %`;

export function reputationSection(organizationId: string, reputation: Reputation, pause: Pause | undefined): Section {
  return {
    lines: [
      `  reputation (last ${reputation.windowDays} days): ${reputation.sends} recipients sent, hard bounces ${reputation.hardBounces} (${percent(reputation.bounceRate)}), complaints ${reputation.complaints} (${percent(reputation.complaintRate)})`,
      pause ? `  PAUSED since ${pause.at}: ${pause.reason} (lift it with "org resume --org ${organizationId}")` : '  sending: not paused',
    ],
    json: {
      paused: pause !== undefined,
      pausedAt: pause?.at ?? null,
      pausedReason: pause?.reason ?? null,
      reputation: {
        windowDays: reputation.windowDays,
        sends: reputation.sends,
        hardBounces: reputation.hardBounces,
        complaints: reputation.complaints,
        bounceRate: reputation.bounceRate,
        complaintRate: reputation.complaintRate,
      },
    },
  };
}

/** The sections joined: lines one after the other, JSON fields into one object. */
export function printSections(sections: readonly Section[]): { human: string; json: Record<string, unknown> } {
  return { human: sections.flatMap((section) => section.lines).join('\n'), json: Object.assign({}, ...sections.map((section) => section.json)) };
}

async function readPauseOf(store: DynamoDbAdminStore, organizationId: string): Promise<Pause | undefined> {
  const { Item } = await store.client.send(
    new GetCommand({ TableName: store.tableName, Key: itemKey.organization(organizationId), ProjectionExpression: PAUSE_PROJECTION, ConsistentRead: true }),
  );
  return readPause(Item);
}

export function addOrgCommands(org: Command, leaf: Leaf): void {
  leaf(org, 'limits', "set an Organization's rate, daily quota, fair-share weight and bound on pending scheduled messages (with no option: print them)", async (store, o) => {
    const id = o.org!.toLowerCase();
    const change = {
      rate: limitOption(o.rate, 'rate', true),
      daily: limitOption(o.daily, 'daily', true),
      weight: limitOption(o.weight, 'weight', false) ?? undefined,
      scheduled: limitOption(o.scheduled, 'scheduled', true),
    };
    const unchanged = Object.values(change).every((value) => value === undefined);
    const limits = unchanged ? await store.limits.get(id) : await store.limits.set(id, change);
    return { human: `Organization ${id}: ${describeLimits(limits)}`, json: { organizationId: id, ...limitsJson(limits) } };
  })
    .requiredOption('--org <uuid>', 'Organization id')
    .option('--rate <R>', 'its own maximum send rate, recipients per second (0 removes it)')
    .option('--daily <N>', 'its daily quota, recipients per UTC day (0 removes it)')
    .option('--weight <W>', "its weight in the fair share of the account's rate (default 1)")
    .option('--scheduled <N>', `how many scheduled messages it may hold not yet sent (default ${DEFAULT_SCHEDULED}; 0 restores the default)`)
    .addHelpText('after', '\nA change reaches every send at most AUTH_CACHE_SECONDS later (the send path reads the limits with the Organization).');

  leaf(org, 'tracking', "set an Organization's default open and click tracking, for messages that do not give Tracking (with no option: print it)", async (store, o) => {
    // Both values are checked before anything is read, so a bad one changes nothing anywhere.
    const change = { opens: switchOption(o.opens, 'opens'), clicks: switchOption(o.clicks, 'clicks') };
    const id = (await store.getOrganization(o.org!)).id;
    const tracking = new OrganizationTrackingStore(store.client, store.tableName);
    const now = change.opens === undefined && change.clicks === undefined ? await tracking.get(id) : await tracking.set(id, change);
    return { human: `Organization ${id}: by default opens ${onOff(now.opens)}, clicks ${onOff(now.clicks)}`, json: { organizationId: id, opens: now.opens, clicks: now.clicks } };
  })
    .requiredOption('--org <uuid>', 'Organization id')
    .option('--opens <on|off>', 'track opens (an open pixel in HTML) of messages without Tracking')
    .option('--clicks <on|off>', "track clicks (HTML's http/https links rewritten) of messages without Tracking")
    .addHelpText('after', [
      '',
      'Off unless set. A message\'s own Tracking wins, switch by switch. A change applies to every message',
      'accepted AUTH_CACHE_SECONDS after it at the latest (the send path reads it with the Organization, and may',
      'use what it read before for that long); a scheduled message keeps the tracking it was accepted with.',
    ].join('\n'));

  leaf(org, 'show', "show an Organization: members, senders, its limits and today's use of its quota, its default tracking, its bounce and complaint rates and whether it is paused", async (store, o) => {
    const organization = await store.getOrganization(o.org!);
    const reputations = new DynamoDbReputationStore(store.client, store.tableName);
    const [reputation, pause, limits, usage, tracking] = await Promise.all([
      reputations.read(organization.id, Date.now()),
      readPauseOf(store, organization.id),
      store.limits.get(organization.id),
      store.limits.usageToday(organization.id),
      new OrganizationTrackingStore(store.client, store.tableName).get(organization.id),
    ]);
    return printSections([organizationSection(organization), limitsSection(limits, usage), trackingSection(tracking), reputationSection(organization.id, reputation, pause)]);
  }).requiredOption('--org <uuid>', 'Organization id');

  leaf(org, 'resume', 'lift the pause of an Organization; its reputation starts a fresh 7-day window', async (store, o) => {
    const organizationId = (await store.getOrganization(o.org!)).id;
    const lifted = await new DynamoDbReputationStore(store.client, store.tableName).resume(organizationId);
    if (lifted === false) throw new RecordNotFoundError(`no Organization with id ${organizationId}`);
    return {
      human: lifted
        ? `Organization ${organizationId} may send again (it was paused since ${lifted.at}: ${lifted.reason}); its reputation starts a fresh ${WINDOW_DAYS}-day window`
        : `Organization ${organizationId} was not paused`,
      json: { organizationId, paused: false, wasPaused: lifted !== undefined },
    };
  }).requiredOption('--org <uuid>', 'Organization id');

  const tenants = org.command('tenants').description('Amazon SES tenants: one per Organization (on in AWS; locally with SES_TENANTS=true)');
  leaf(tenants, 'sync', 'give every Organization its SES tenant, reputation policy and associations (safe to run again)', async (store, _o, admin) => {
    const ses = admin.tenants();
    if (!ses) throw new InvalidArgumentError('SES tenants are off for this target: they are on for a deployed table (--table), or set SES_TENANTS=true');
    let created = 0;
    const ids = (await scanKind(store, { prefix: PARTITIONS.organization, sortKey: 'ORG' }, ['organizationId'])).map((item) => String(item.organizationId)).sort();
    for (const id of ids) {
      const { senders } = await store.getOrganization(id);
      if (await ses.ensure(id, senders)) created++;
    }
    return {
      human: `${ids.length} Organization${ids.length === 1 ? '' : 's'} checked, ${created} tenant${created === 1 ? '' : 's'} created`,
      json: { organizations: ids.length, created },
    };
  }).addHelpText('after', TENANT_HELP);
}
