/**
 * The fairness scenarios of `npm run bench` (docs/fair-share.md; issue 20): SES enforcing the
 * account's rate 20 ms behind a latency proxy, as in bench/rate.ts, and two Organizations on one
 * account. For each: how long the small sender waited, how much of the rate was used, how the
 * rate was split, throttled calls per message sent, and whether what SES received equals what the
 * API reported `Sent`.
 */
import { createDynamoDbClient } from '../functions/shared/runtime/clients';
import { DynamoDbAdminStore } from '../infra/admin/admin-store';
import type { DemoTenant } from '../infra/local/seed';
import { seedDemo } from '../infra/local/seed';
import type { Answer, Rig } from './rate';
import { body, markdownTable, post, rig, storedCount } from './rate';
import { round } from './stats';

export interface FairnessScenario {
  readonly name: string;
  readonly rate: number;
  /** Messages reported Sent, per Organization. */
  readonly sentA: number;
  readonly sentB: number;
  /** The small sender's answer time (ms), where the scenario has one. */
  readonly smallAnsweredMs?: number;
  /** Share of the rate used while mail waited: ideal time for what was sent / time taken. */
  readonly rateUsed?: number;
  /** A's messages Sent / B's, where both flooded. */
  readonly ratio?: number;
  readonly throttledCallsPerSent: number;
  readonly nothingLostOrDoubled: boolean;
}

const sentOf = (answers: readonly Answer[]) => answers.flatMap((a) => a.statuses).filter((s) => s === 'Sent').length;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A second Organization on the rig's table, with its own user and key, and the weight given. */
async function secondOrganization(r: Rig, weight?: number): Promise<DemoTenant> {
  const stack = r.stacks[0]!;
  const documents = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: stack.dynamodbEndpoint });
  try {
    const admin = new DynamoDbAdminStore(documents, stack.tableName);
    const tenant = await seedDemo(admin);
    await admin.addSender(tenant.organizationId, { domain: 'example.com' });
    if (weight !== undefined) await admin.limits.set(tenant.organizationId, { weight });
    return tenant;
  } finally {
    documents.destroy();
  }
}

async function setWeight(r: Rig, organizationId: string, weight: number): Promise<void> {
  const stack = r.stacks[0]!;
  const documents = createDynamoDbClient({ region: 'us-east-1', dynamodbEndpoint: stack.dynamodbEndpoint });
  try {
    await new DynamoDbAdminStore(documents, stack.tableName).limits.set(organizationId, { weight });
  } finally {
    documents.destroy();
  }
}

/** A floods `floods` × 100; one second later B sends 10 (on the second instance, if there is one). */
async function floodAndNewcomer(name: string, instances: number): Promise<FairnessScenario> {
  const rate = 20;
  const r = await rig(rate, instances, 10_000);
  try {
    const a = r.stacks[0]!.demo!;
    const b = await secondOrganization(r);
    const before = r.gate.stats();
    const started = performance.now();
    const flood = Promise.all(Array.from({ length: 8 }, (_, i) => post(r.stacks[0]!, a.apiKey, body(a.organizationId, `${name}-a${i}`))));
    await sleep(1_000);
    const smallStarted = performance.now();
    const small = await post(r.stacks.at(-1)!, b.apiKey, body(b.organizationId, `${name}-b`, 10));
    const smallAnsweredMs = performance.now() - smallStarted;
    const floodAnswers = await flood;
    const elapsedMs = performance.now() - started;
    const sent = sentOf(floodAnswers) + sentOf([small]);
    const idealMs = (Math.max(0, sent - rate) / rate) * 1_000;
    return {
      name,
      rate,
      sentA: sentOf(floodAnswers),
      sentB: sentOf([small]),
      smallAnsweredMs: round(smallAnsweredMs, 0),
      rateUsed: round(idealMs / elapsedMs, 3),
      throttledCallsPerSent: round((r.gate.stats().throttled - before.throttled) / Math.max(1, sent), 3),
      nothingLostOrDoubled: (await storedCount(r.gate.endpoint)) === sent,
    };
  } finally {
    await r.close();
  }
}

/** A (weight 3) and B (weight 1) both flood 4 × 100 at once. */
async function weighted(): Promise<FairnessScenario> {
  const rate = 20;
  const r = await rig(rate, 1, 10_000);
  try {
    const a = r.stacks[0]!.demo!;
    await setWeight(r, a.organizationId, 3);
    const b = await secondOrganization(r, 1);
    const before = r.gate.stats();
    const floods = (tenant: DemoTenant, tag: string) => Array.from({ length: 4 }, (_, i) => post(r.stacks[0]!, tenant.apiKey, body(tenant.organizationId, `${tag}${i}`)));
    const [answersA, answersB] = await Promise.all([Promise.all(floods(a, 'w-a')), Promise.all(floods(b, 'w-b'))]);
    const [sentA, sentB] = [sentOf(answersA), sentOf(answersB)];
    return {
      name: 'weights 3 : 1, both flooding 4 × 100 at 20/s',
      rate,
      sentA,
      sentB,
      ratio: round(sentA / Math.max(1, sentB), 2),
      throttledCallsPerSent: round((r.gate.stats().throttled - before.throttled) / Math.max(1, sentA + sentB), 3),
      nothingLostOrDoubled: (await storedCount(r.gate.endpoint)) === sentA + sentB,
    };
  } finally {
    await r.close();
  }
}

/** At 5/s, B sends 3 × 100 messages that have already expired; then A sends one. */
async function expiredCostNothing(): Promise<FairnessScenario> {
  const rate = 5;
  const r = await rig(rate, 1);
  try {
    const a = r.stacks[0]!.demo!;
    const b = await secondOrganization(r);
    const before = r.gate.stats();
    const expired = { ExpirationDateTime: '2020-01-01 00:00:00' };
    const answersB = await Promise.all(Array.from({ length: 3 }, (_, i) => post(r.stacks[0]!, b.apiKey, body(b.organizationId, `x-b${i}`, 100, expired))));
    const started = performance.now();
    const one = await post(r.stacks[0]!, a.apiKey, body(a.organizationId, 'x-a', 1));
    const smallAnsweredMs = performance.now() - started;
    const sent = sentOf([one]) + sentOf(answersB);
    return {
      name: '5/s: B sends 3 × 100 expired, then A sends 1',
      rate,
      sentA: sentOf([one]),
      sentB: sentOf(answersB),
      smallAnsweredMs: round(smallAnsweredMs, 0),
      throttledCallsPerSent: round((r.gate.stats().throttled - before.throttled) / Math.max(1, sent), 3),
      nothingLostOrDoubled: (await storedCount(r.gate.endpoint)) === sent,
    };
  } finally {
    await r.close();
  }
}

export async function measureFairness(progress: (line: string) => void): Promise<FairnessScenario[]> {
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const rows: FairnessScenario[] = [];
  progress('fairness: 20/s, A floods 8 × 100, B sends 10 one second later…');
  rows.push(await floodAndNewcomer('20/s: A floods 8 × 100, B sends 10 after 1 s', 1));
  progress('fairness: the same with A and B on two instances…');
  rows.push(await floodAndNewcomer('20/s, two instances: A floods 8 × 100, B sends 10 after 1 s', 2));
  progress('fairness: weights 3 : 1, both flooding…');
  rows.push(await weighted());
  progress('fairness: expired mail costs nothing…');
  rows.push(await expiredCostNothing());
  return rows;
}

export function fairnessTargetsMet(rows: readonly FairnessScenario[]): { id: string; description: string; pass: boolean; value: string }[] {
  return rows.map((row) => {
    const common = row.nothingLostOrDoubled && row.throttledCallsPerSent <= 0.05;
    if (row.ratio !== undefined) {
      return {
        id: `fairness: ${row.name}`,
        description: `${row.name}: A gets 2.2–4× B's messages, ≤ 0.05 throttled calls per sent, nothing lost or doubled`,
        pass: common && row.ratio >= 2.2 && row.ratio <= 4,
        value: `A ${row.sentA}, B ${row.sentB}: ${row.ratio}×, ${row.throttledCallsPerSent} throttled/sent`,
      };
    }
    if (row.rateUsed !== undefined) {
      return {
        id: `fairness: ${row.name}`,
        description: `${row.name}: B's 10 sent in ≤ 3 s, rate used ≥ 85 %, ≤ 0.05 throttled calls per sent, nothing lost or doubled`,
        pass: common && row.sentB === 10 && (row.smallAnsweredMs ?? Infinity) <= 3_000 && row.rateUsed >= 0.85,
        value: `B answered in ${((row.smallAnsweredMs ?? 0) / 1_000).toFixed(2)} s with ${row.sentB}/10 sent, rate used ${Math.round(row.rateUsed * 100)} %, ${row.throttledCallsPerSent} throttled/sent`,
      };
    }
    return {
      id: `fairness: ${row.name}`,
      description: `${row.name}: A answered in < 2 s, nothing of B sent, nothing lost or doubled`,
      pass: common && row.sentA === 1 && row.sentB === 0 && (row.smallAnsweredMs ?? Infinity) < 2_000,
      value: `A answered in ${((row.smallAnsweredMs ?? 0) / 1_000).toFixed(2)} s`,
    };
  });
}

export function renderFairness(rows: readonly FairnessScenario[]): string {
  const header = ['scenario (SES at the rate, 20 ms latency)', 'sent A / B', 'small sender answered', 'rate used', 'A / B', 'throttled calls / sent', 'SES got = Sent'];
  const lines = rows.map((r) => [
    r.name,
    `${r.sentA} / ${r.sentB}`,
    r.smallAnsweredMs === undefined ? '—' : `${(r.smallAnsweredMs / 1_000).toFixed(2)} s`,
    r.rateUsed === undefined ? '—' : `${Math.round(r.rateUsed * 100)} %`,
    r.ratio === undefined ? '—' : `${r.ratio}×`,
    String(r.throttledCallsPerSent),
    r.nothingLostOrDoubled ? 'yes' : 'NO',
  ]);
  return markdownTable(header, lines);
}
