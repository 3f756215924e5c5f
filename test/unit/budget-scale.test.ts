/**
 * The sharded send budget (domain/budget-shards.ts) simulated at scale on a virtual clock, with
 * every draw (arrivals, Organizations, shard choices, jitter) taken from fast-check, so a failure
 * replays from its seed: 10,000 Organizations and 1,000 one-message requests a second at SES
 * rate 1,000/s, and floods by weight beside an Organization with a rate of its own and a shard
 * that cannot be reached. It reports each item's writes per second and size, and checks that the
 * union of all shards never exceeds the account's rate.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { BudgetState } from '../../functions/shared/domain/budget-state';
import { EMPTY_STATE, sanitize } from '../../functions/shared/domain/budget-state';
import { SHARD_ENTRIES, chooseShard, homeShard, shardCount, shardPace } from '../../functions/shared/domain/budget-shards';
import { MIN_ROUND_GAP_MS, bookRound } from '../../functions/shared/domain/fair-share';
import { fitsBucket } from '../support/bucket';

const DEADLINE_MS = 25_000;
const KB4 = 4 * 1024;

interface Sender {
  readonly id: string;
  readonly weight: number;
  readonly cap?: number;
}
interface Request {
  readonly sender: Sender;
  readonly lastSendAt: number;
  left: number;
  nextAt: number;
  failed?: 'storage' | 'deadline';
  /** The function instance serving it (drawn at its first round; one request per instance, as in Lambda). */
  instance?: number;
}
interface Turn {
  readonly org: string;
  readonly at: number;
}

/** A binary min-heap: the simulation's event queue. */
class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly before: (a: T, b: T) => number) {}
  get size(): number {
    return this.items.length;
  }
  push(item: T): void {
    const items = this.items;
    items.push(item);
    for (let i = items.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (this.before(items[i]!, items[parent]!) >= 0) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }
  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      for (let i = 0; ; ) {
        const [l, r] = [2 * i + 1, 2 * i + 2];
        let m = i;
        if (l < items.length && this.before(items[l]!, items[m]!) < 0) m = l;
        if (r < items.length && this.before(items[r]!, items[m]!) < 0) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }
}

/** A 36-character id, like the Organization UUIDs the items hold. */
const orgId = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** The item as the table would hold it: holdings as triples, plus its key and bookkeeping attributes. */
const itemBytes = (state: BudgetState) =>
  JSON.stringify({ pk: 'BUDGET#shard#00', sk: 'BUDGET', v: 123456, expiresAt: 1_800_000_000, tat: state.tat, orgs: Object.fromEntries(Object.entries(state.orgs).map(([id, { held, ...rest }]) => [id, { ...rest, held: held.map((h) => [h.from, h.to, h.units]) }])) }).length;

/**
 * Runs requests round by round until all are done, each on one of `instances` function instances
 * as the store books them: on the instance's own shard while it has room now, otherwise on the
 * one of it and a shard drawn at random with less ahead; an instance whose own shard is down
 * takes the other as its own (a capped Organization books on its home shard). `draw()` is in [0, 1).
 */
function simulate(options: { rate: number; requests: Request[]; draw: () => number; down?: ReadonlySet<number>; untilMs: number; instances?: number; more?: (request: Request, now: number) => Request | undefined }) {
  const { rate, draw, down = new Set<number>(), instances = 100 } = options;
  const preferred = new Map<number, number>();
  const shards = shardCount(rate);
  const pace = shardPace(rate);
  const states: BudgetState[] = Array.from({ length: shards }, () => EMPTY_STATE);
  const writes = new Map<string, Map<number, number>>();
  const write = (item: string, now: number) => {
    const perSecond = writes.get(item) ?? new Map<number, number>();
    perSecond.set(Math.floor(now / 1_000), (perSecond.get(Math.floor(now / 1_000)) ?? 0) + 1);
    writes.set(item, perSecond);
  };
  let largest = 0;
  let rounds = 0;
  const turns: Turn[] = [];
  const queue = new Heap<Request>((a, b) => a.nextAt - b.nextAt);
  for (const request of options.requests) queue.push(request);
  const all = [...options.requests];
  while (queue.size > 0) {
    const request = queue.pop()!;
    const now = request.nextAt;
    const finish = () => {
      const next = options.more?.(request, now);
      if (next && next.nextAt < options.untilMs) {
        queue.push(next);
        all.push(next);
      }
    };
    if (now + MIN_ROUND_GAP_MS > request.lastSendAt) {
      request.failed = 'deadline';
      finish();
      continue;
    }
    rounds++;
    const { sender } = request;
    // A capped Organization books on its home shard, where its own-rate schedule lives whole.
    const home = sender.cap !== undefined ? homeShard(sender.id, shards) : undefined;
    const instance = (request.instance ??= Math.floor(draw() * instances));
    const own = preferred.get(instance) ?? Math.floor(draw() * shards);
    preferred.set(instance, own);
    const roomNow = home === undefined && !down.has(own) && sanitize(states[own], now, pace, SHARD_ENTRIES).tat <= now;
    const [first, second] = home !== undefined ? [home, home] : roomNow ? [own, own] : [own, Math.floor(draw() * shards)];
    const readable = new Map<number, BudgetState>();
    for (const k of [first, second]) if (!down.has(k)) readable.set(k, sanitize(states[k], now, pace, SHARD_ENTRIES));
    if (home === undefined && down.has(own)) {
      if (down.has(second)) preferred.delete(instance);
      else preferred.set(instance, second);
    }
    const k = chooseShard(readable, first, second);
    if (k === undefined) {
      // Neither shard it looked at can be reached: this request alone fails (503), nothing sent.
      request.failed = 'storage';
      finish();
      continue;
    }
    const round = bookRound(readable.get(k)!, {
      organizationId: sender.id,
      weight: sender.weight,
      cap: sender.cap,
      pace,
      messages: Array.from({ length: request.left }, () => ({ units: 1 })),
      now,
      lastSendAt: request.lastSendAt,
    });
    states[k] = round.state;
    write(`SHARD#${k}`, now);
    largest = Math.max(largest, itemBytes(round.state));
    for (const at of round.turns) if (typeof at === 'number') turns.push({ org: sender.id, at });
    request.left -= round.turns.length;
    if (request.left === 0) finish();
    else if (round.stop === 'deadline') {
      request.failed = 'deadline';
      finish();
    } else {
      request.nextAt = (round.stop === 'wait' ? round.at : now + MIN_ROUND_GAP_MS) + draw() * 50;
      queue.push(request);
    }
  }
  const hottest = Math.max(...[...writes.values()].flatMap((perSecond) => [...perSecond.values()]));
  return { turns: turns.sort((a, b) => a.at - b.at), hottest, writes, largest, rounds, shards, requests: all };
}

/**
 * Draws in [0, 1) from a seed fast-check draws (mulberry32): thousands of draws per run, and a
 * failure still replays from fast-check's seed and path.
 */
const seeds = fc.noShrink(fc.integer());
function reader(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('the sharded send budget at scale (simulated)', () => {
  it('carries 10,000 Organizations and 1,000 one-message requests a second at 1,000/s: no item written over 300 times a second or past 4 KB, SES never over its rate', () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        const draw = reader(seed);
        const rate = 1_000;
        const seconds = 5;
        const requests: Request[] = Array.from({ length: rate * seconds }, (_, i) => {
          const at = i + draw(); // one a millisecond, each somewhere in its millisecond
          return { sender: { id: orgId(Math.floor(draw() * 10_000)), weight: 1 }, lastSendAt: at + DEADLINE_MS, left: 1, nextAt: at };
        });
        const run = simulate({ rate, requests, draw, untilMs: Number.POSITIVE_INFINITY });
        const sent = run.turns.length;
        console.info(
          `sharded budget, ${rate}/s, ${requests.length} requests from 10,000 Organizations: ${run.shards} shards, hottest item ${run.hottest} writes/s, ` +
            `${(run.rounds / requests.length).toFixed(2)} writes per request, largest item ${run.largest} bytes, ${sent} sent`,
        );
        expect(requests.filter((r) => r.failed)).toEqual([]);
        expect(sent).toBe(requests.length);
        expect(run.hottest).toBeLessThanOrEqual(300);
        expect(run.largest).toBeLessThanOrEqual(KB4);
        expect(fitsBucket(run.turns.map((t) => t.at), rate)).toBe(true);
        // Requests come at the rate, so they wait little: one round each, nearly always.
        expect(run.rounds / requests.length).toBeLessThan(1.5);
      }),
      { numRuns: 3 },
    );
  });

  it('shares a flood by weight across shards, holds an own rate as a hard cap, and loses only the requests that drew a shard that is down', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(100, 400, 1_000),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 2, maxLength: 3 }),
        fc.integer({ min: 1, max: 20 }),
        fc.boolean(),
        seeds,
        (rate, weights, cap, oneDown, seed) => {
          const draw = reader(seed);
          const untilMs = 20_000;
          const flooders: Sender[] = weights.map((weight, i) => ({ id: orgId(900_000 + i), weight }));
          const capped: Sender = { id: orgId(999_999), weight: 1, cap };
          const flooding = new Set<Sender>([...flooders, capped]);
          const big = (sender: Sender, at: number): Request => ({ sender, lastSendAt: at + DEADLINE_MS, left: 100, nextAt: at });
          // A flood keeps more requests in flight than one shard's share could serve: 4 plus one per shard.
          const inFlight = 4 + shardCount(rate);
          const requests = [...flooders, capped].flatMap((sender) => Array.from({ length: inFlight }, (_, i) => big(sender, i * 10 + draw() * 10)));
          // Light traffic: a tenth of the rate in one-message requests from 10,000 Organizations.
          const light: Request[] = Array.from({ length: Math.floor((rate / 10) * (untilMs / 1_000)) }, (_, i) => {
            const at = (i * 10_000) / rate + draw();
            return { sender: { id: orgId(Math.floor(draw() * 10_000)), weight: 1 }, lastSendAt: at + DEADLINE_MS, left: 1, nextAt: at };
          });
          const shards = shardCount(rate);
          const down = new Set(oneDown && shards > 1 ? [Math.floor(draw() * shards)] : []);
          // Floods go on: each finished request is followed by another of the same sender.
          const run = simulate({ rate, requests: [...requests, ...light], draw, down, untilMs, more: (done, now) => (flooding.has(done.sender) ? big(done.sender, now + (done.failed === 'storage' ? 1_000 : 0)) : undefined) });

          // Never over the account's rate, all shards together.
          expect(fitsBucket(run.turns.map((t) => t.at), rate)).toBe(true);
          // The capped Organization never over its own rate, whatever the shards did.
          expect(fitsBucket(run.turns.filter((t) => t.org === capped.id).map((t) => t.at), cap)).toBe(true);
          // Floods share by weight while they all wait (the middle of the run), within fifteen points.
          // Over 90 seeds of two equal floods at 100, 400 and 1,000/s, most were within ten points
          // and the widest 13 (one flood's requests reaching their deadline together and starting
          // over shifts its share for a while; the same before and after issue 32's shard changes).
          // (With a shard down, every request that drew it twice starts over, and shares were
          // seen up to 13 points off: that case is held to the safety checks only.)
          const inWindow = (org: string) => run.turns.filter((t) => t.org === org && t.at >= 4_000 && t.at < 18_000).length;
          const counts = flooders.map((f) => inWindow(f.id));
          const total = counts.reduce((a, b) => a + b, 0);
          const weightSum = weights.reduce((a, b) => a + b, 0);
          if (down.size === 0) flooders.forEach((f, i) => expect(Math.abs(counts[i]! / total - f.weight / weightSum)).toBeLessThan(0.15));
          // Work-conserving: the shards that are up are kept busy meanwhile.
          const windowTurns = run.turns.filter((t) => t.at >= 4_000 && t.at < 18_000).length;
          expect(windowTurns).toBeGreaterThanOrEqual(Math.floor(rate * 14 * ((shards - down.size) / shards) * 0.85));
          // A shard that is down fails only requests that drew it twice; nothing of theirs was sent.
          // (The capped Organization needs its home shard: if that is the one down, all its requests fail so.)
          const lost = run.requests.filter((r) => r.failed === 'storage' && r.sender !== capped);
          if (down.size === 0) expect(lost).toEqual([]);
          // An instance whose own shard is down loses a round only when it draws that shard again
          // (1 in S), and then takes another as its own: a few rounds per instance at most.
          expect(lost.length).toBeLessThanOrEqual(3 + (2 * run.rounds) / (shards * shards));
          // Light requests are never starved by the floods.
          expect(light.filter((r) => r.failed === 'deadline')).toEqual([]);
          expect(run.hottest).toBeLessThanOrEqual(300);
          expect(run.largest).toBeLessThanOrEqual(KB4);
        },
      ),
      // A fixed seed: the same eight cases in every run (any failure of another seed still replays from its own).
      { numRuns: 8, seed: 3_200, examples: [[400, [2, 2], 11, false, -492631364]] },
    );
  });
});
