/** The cancel function's composition root: the access store (and auth cache), the schedules, their timer and webhooks. */
import type { ClientOptions } from '../shared/runtime/clients';
import type { Config } from '../shared/runtime/config';
import type { LocalParts } from '../send/dependencies';
import { createDependencies } from '../send/dependencies';
import type { CancelHandlerDependencies } from './handler';

export function createCancelDependencies(config: Config, clients: ClientOptions = {}, local: LocalParts = {}): CancelHandlerDependencies {
  // The send function's wiring of the same stores, so the two cannot read schedules differently;
  // nothing is sent from here (no SES call is ever made by this function).
  const { access, scheduling, logger, metrics, now } = createDependencies(config, clients, local);
  return { config, access, ...scheduling, logger, metrics, now };
}
