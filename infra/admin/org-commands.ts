/**
 * The admin commands of Organization isolation (CONTRACT section 11): `org limits` sets an
 * Organization's rate, daily quota and fair-share weight; `org show` prints the Organization with
 * its limits and today's use of its quota. Each section of `org show` is built by a function of
 * its own, so that more (reputation) can join it.
 */
import type { Command } from 'commander';
import type { OrganizationLimits } from '../../functions/shared/domain/org-limits';
import { LIMIT_BOUNDS } from '../../functions/shared/domain/org-limits';
import { InvalidArgumentError } from '../../functions/shared/store/records';
import type { DynamoDbAdminStore } from './admin-store';
import type { Leaf } from './command-frame';

/** A limit option: a number within its bounds, or 0 to remove it (`removable`). */
function limitOption(value: string | undefined, name: 'rate' | 'daily' | 'weight', removable: boolean): number | null | undefined {
  if (value === undefined) return undefined;
  const number = Number(value.trim());
  const { min, max } = LIMIT_BOUNDS[name];
  if (removable && number === 0 && value.trim() !== '') return null;
  const whole = name !== 'daily' || Number.isInteger(number);
  if (value.trim() === '' || !Number.isFinite(number) || number < min || number > max || !whole) {
    const kind = name === 'daily' ? 'a whole number' : 'a number';
    throw new InvalidArgumentError(`--${name} must be ${kind} from ${min} to ${max}${removable ? ', or 0 to remove it' : ''}, got "${value}"`);
  }
  return number;
}

function describeLimits(limits: OrganizationLimits): string {
  return [
    limits.rate === undefined ? 'no rate of its own' : `rate ${limits.rate} recipients/s`,
    limits.daily === undefined ? 'no daily quota' : `daily quota ${limits.daily} recipients`,
    `weight ${limits.weight}`,
  ].join(', ');
}

function limitsJson(limits: OrganizationLimits): Record<string, unknown> {
  return { rate: limits.rate ?? null, daily: limits.daily ?? null, weight: limits.weight };
}

/** The `org show` sections: each a human line and a JSON part. */
async function organizationSection(store: DynamoDbAdminStore, id: string) {
  const org = await store.getOrganization(id);
  return {
    human: `Organization "${org.name}" (${org.id}): ${org.members.length} member${org.members.length === 1 ? '' : 's'}, senders ${org.senders.join(', ') || 'none'}`,
    json: { id: org.id, name: org.name, members: org.members, senders: org.senders },
  };
}

async function limitsSection(store: DynamoDbAdminStore, id: string) {
  const [limits, usage] = await Promise.all([store.getLimits(id), store.usageToday(id)]);
  const used =
    limits.daily === undefined
      ? `today's use is counted only while a daily quota is set`
      : `today (${usage.day} UTC) ${usage.used} of ${limits.daily} recipients used, ${Math.max(0, limits.daily - usage.used)} left`;
  return {
    human: `limits: ${describeLimits(limits)}; ${used}`,
    json: { limits: limitsJson(limits), usage: { day: usage.day, used: usage.used, remaining: limits.daily === undefined ? null : Math.max(0, limits.daily - usage.used) } },
  };
}

export function addOrgCommands(org: Command, leaf: Leaf): void {
  leaf(org, 'limits', "set an Organization's rate, daily quota and fair-share weight (with no option: print them)", async (store, o) => {
    const id = o.org!.toLowerCase();
    const change = { rate: limitOption(o.rate, 'rate', true), daily: limitOption(o.daily, 'daily', true), weight: limitOption(o.weight, 'weight', false) ?? undefined };
    const unchanged = change.rate === undefined && change.daily === undefined && change.weight === undefined;
    const limits = unchanged ? await store.getLimits(id) : await store.setLimits(id, change);
    return { human: `Organization ${id}: ${describeLimits(limits)}`, json: { organizationId: id, ...limitsJson(limits) } };
  })
    .requiredOption('--org <uuid>', 'Organization id')
    .option('--rate <R>', 'its own maximum send rate, recipients per second (0 removes it)')
    .option('--daily <N>', 'its daily quota, recipients per UTC day (0 removes it)')
    .option('--weight <W>', 'its weight in the fair share of the account\'s rate (default 1)')
    .addHelpText('after', '\nLimits apply to sends within AUTH_CACHE_SECONDS (the send path reads them with the Organization).');

  leaf(org, 'show', 'print an Organization with its limits and today\'s use of its daily quota', async (store, o) => {
    const id = o.org!.toLowerCase();
    const sections = [await organizationSection(store, id), await limitsSection(store, id)];
    return { human: sections.map((section) => section.human).join('\n'), json: Object.assign({}, ...sections.map((section) => section.json)) };
  }).requiredOption('--org <uuid>', 'Organization id');
}
