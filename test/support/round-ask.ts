/** A one-message round of org-a at `rate` over `shards` budget shards, as the budget suites ask for it. */
import type { RoundAsk } from '../../functions/shared/domain/fair-share';
import { paceFor } from '../../functions/shared/domain/send-pace';

export function roundAsker(rate: number, shards: number): (now: number, overrides?: Partial<RoundAsk>) => RoundAsk {
  return (now, overrides = {}) => ({
    organizationId: 'org-a',
    weight: 1,
    pace: paceFor(rate),
    messages: [{ units: 1 }],
    now,
    lastSendAt: now + 60_000,
    shards,
    ...overrides,
  });
}
