/**
 * The one reader of an Organization item's pause (CONTRACT section 11 item 3): `pausedAt` and
 * `pausedReason`, written by dynamodb-reputation-store.ts. The send path, the settings API and the
 * admin command line all read the pause through it, from reads of the ORG item they make anyway.
 */
import type { Pause } from '../domain/reputation';
import { PAUSE_ATTRIBUTES } from './table';

/** The attributes to project when reading an ORG item for its pause. */
export const PAUSE_PROJECTION = `${PAUSE_ATTRIBUTES.at}, ${PAUSE_ATTRIBUTES.reason}`;

export function readPause(item: Readonly<Record<string, unknown>> | undefined): Pause | undefined {
  const at = item?.[PAUSE_ATTRIBUTES.at];
  if (typeof at !== 'string' || at === '') return undefined;
  const reason = item?.[PAUSE_ATTRIBUTES.reason];
  return { at, reason: typeof reason === 'string' ? reason : 'paused' };
}
