/**
 * The scheduled-send function's composition root: the send function's own dependencies (so a
 * scheduled message is sent by exactly what sends any other), and its schedules, timer and notices.
 */
import type { ClientOptions } from '../shared/runtime/clients';
import type { Config } from '../shared/runtime/config';
import type { LocalParts } from '../send/dependencies';
import { createDependencies } from '../send/dependencies';
import type { FireDependencies } from './fire';

export function createFireDependencies(config: Config, clients: ClientOptions = {}, local: LocalParts = {}): FireDependencies {
  const send = createDependencies(config, clients, local);
  return { send, ...send.scheduling, logger: send.logger, now: send.now };
}
