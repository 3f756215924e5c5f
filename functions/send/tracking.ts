/**
 * A message's `Tracking` (CONTRACT section 17 item 1): `{ "Opens": boolean, "Clicks": boolean }`,
 * both optional. Its shape is checked with the rest of the body (`readTrackingChoice`); once the
 * Organization is read, the choice is resolved against the Organization's default
 * (`resolveMessageTracking`), and a message goes out, or is stored until its `SendAt`, with the
 * tracking it was accepted with: a later change of the default does not reach it.
 */
import type { ProblemList } from '../shared/http/body-rules';
import { isObject, own, unknownFields } from '../shared/http/body-rules';
import type { ValidMessage } from '../shared/mail/valid-message';
import type { TrackingChoice } from '../shared/mail/tracking';
import { resolveTracking } from '../shared/mail/tracking';
import type { OrganizationAccess } from '../shared/store/ports';

export const TRACKING_FIELD = 'Tracking';
const SWITCHES = { Opens: 'opens', Clicks: 'clicks' } as const;
const SWITCH_FIELDS = new Set(Object.keys(SWITCHES));

/** The message's own choice, or undefined (absent, null, or a problem added at its pointer). */
export function readTrackingChoice(value: unknown, pointer: string, problems: ProblemList): TrackingChoice | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) {
    problems.add(pointer, 'must be an object: { "Opens": true|false, "Clicks": true|false }');
    return undefined;
  }
  const before = problems.count;
  unknownFields(value, SWITCH_FIELDS, pointer, problems);
  const choice: { opens?: boolean; clicks?: boolean } = {};
  for (const [field, key] of Object.entries(SWITCHES)) {
    const given = own(value, field);
    if (given === undefined || given === null) continue;
    if (typeof given === 'boolean') choice[key] = given;
    else problems.add(`${pointer}/${field}`, 'must be true or false');
  }
  return problems.count > before ? undefined : choice;
}

/** Each message with its tracking resolved against the Organization's default, its own choice dropped. */
export function resolveMessageTracking<M extends ValidMessage>(messages: readonly M[], organization: Pick<OrganizationAccess, 'tracking'>): M[] {
  return messages.map((message) => {
    const { trackingChoice, ...rest } = message;
    return { ...rest, tracking: resolveTracking(trackingChoice, organization.tracking) } as M;
  });
}
