/**
 * Open and click tracking (CONTRACT section 17), as the send path tells Amazon SES and as the
 * local stack's SES front reads it back: by the configuration set a message goes through.
 *
 * SES tracks opens and clicks when the configuration set has an event destination for `OPEN` or
 * `CLICK` events; there is no per-message switch. So untracked mail goes through the base set
 * (`SES_CONFIGURATION_SET`, which has neither) and tracked mail through one of three sets named
 * after the base, one per combination. The names are the whole protocol between the send path,
 * the CDK stack that creates the sets and the local front that plays SES, so they live here once.
 */

/** Whether a message's opens and clicks are tracked. */
export interface Tracking {
  readonly opens: boolean;
  readonly clicks: boolean;
}

export const NO_TRACKING: Tracking = { opens: false, clicks: false };

const SUFFIXES = { opens: 'track-opens', clicks: 'track-clicks', both: 'track-opens-clicks' } as const;
export type Combination = keyof typeof SUFFIXES;

/** What each tracked set tracks. */
export const COMBINATIONS: Readonly<Record<Combination, Tracking>> = {
  opens: { opens: true, clicks: false },
  clicks: { opens: false, clicks: true },
  both: { opens: true, clicks: true },
};

const combination = (tracking: Tracking): Combination | undefined =>
  tracking.opens && tracking.clicks ? 'both' : tracking.opens ? 'opens' : tracking.clicks ? 'clicks' : undefined;

/** The tracked set for one combination: `<base>-track-opens` …, or the bare suffix where there is no base (the local stack). */
function trackedName(base: string | undefined, which: Combination): string {
  return base ? `${base}-${SUFFIXES[which]}` : SUFFIXES[which];
}

/** The configuration set a message goes through: the base set when untracked, else its tracked sibling. */
export function configurationSetFor(base: string | undefined, tracking: Tracking): string | undefined {
  const which = combination(tracking);
  return which ? trackedName(base, which) : base;
}

/** Every tracked set for a base, as the stack creates them and IAM grants them. */
export function trackedConfigurationSets(base: string | undefined): Record<Combination, string> {
  return { opens: trackedName(base, 'opens'), clicks: trackedName(base, 'clicks'), both: trackedName(base, 'both') };
}

/** What a configuration set name says about tracking (the local SES front's question): none for any other name. */
export function trackingOfConfigurationSet(name: string | undefined): Tracking {
  if (name === undefined) return NO_TRACKING;
  const which = (Object.keys(SUFFIXES) as Combination[]).find((key) => name === SUFFIXES[key] || name.endsWith(`-${SUFFIXES[key]}`));
  return which ? COMBINATIONS[which] : NO_TRACKING;
}

/** What a message's `Tracking` asks for: a switch it leaves out is the Organization's default. */
export interface TrackingChoice {
  readonly opens?: boolean;
  readonly clicks?: boolean;
}

/** The tracking a message goes out with: its own choice, the Organization's default for the rest. */
export function resolveTracking(choice: TrackingChoice | undefined, organizationDefault: Tracking = NO_TRACKING): Tracking {
  return { opens: choice?.opens ?? organizationDefault.opens, clicks: choice?.clicks ?? organizationDefault.clicks };
}

/** The Organization's default as stored on its item, made safe: anything but `true` is off, so a corrupt value never tracks. */
export function readTracking(value: unknown): Tracking {
  const stored = value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  return { opens: stored.opens === true, clicks: stored.clicks === true };
}

export const isTracked = (tracking: Tracking | undefined): boolean => tracking !== undefined && (tracking.opens || tracking.clicks);
