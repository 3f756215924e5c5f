/**
 * The send-rate budget in memory, with the very arithmetic of the table's (domain/fair-share.ts):
 * for unit tests of the pacer and simulations of many Organizations on a virtual clock. The
 * table's own adapter is tested against dynalite (send-budget.test.ts).
 */
import type { BudgetState, Release, Round, RoundAsk } from '../../functions/shared/domain/fair-share';
import { EMPTY_STATE, bookRound, releaseTurns, sanitize } from '../../functions/shared/domain/fair-share';
import type { Pace } from '../../functions/shared/domain/send-pace';
import type { SendBudget } from '../../functions/shared/store/ports';

export class MemoryBudget implements SendBudget {
  state: BudgetState = EMPTY_STATE;
  writes = 0;

  async book(ask: RoundAsk): Promise<Round> {
    return this.bookNow(ask);
  }

  /** The same, synchronously, for simulations on a virtual clock. */
  bookNow(ask: RoundAsk): Round {
    this.writes++;
    const round = bookRound(sanitize(this.state, ask.now, ask.pace), ask);
    this.state = round.state;
    return round;
  }

  async release(release: Release, pace: Pace | undefined, now: number): Promise<void> {
    this.writes++;
    this.state = releaseTurns(sanitize(this.state, now, pace), release, pace, now);
  }
}
