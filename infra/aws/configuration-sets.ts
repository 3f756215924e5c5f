/**
 * The service's SES configuration sets (CONTRACT section 17 item 3). SES tracks opens and clicks
 * per configuration set, never per message, so there are four, alike in everything else:
 *
 * - the base set, which every untracked message goes through: no open or click tracking, and
 *   engagement tracking switched off so that an account-wide Virtual Deliverability Manager
 *   setting cannot add a pixel or rewrite links behind the service's back;
 * - three tracked sets, one per combination, named after the base by
 *   functions/shared/mail/tracking.ts (the send path picks one by that name), with the optional
 *   custom redirect domain (`trackingDomain`) served over HTTPS only.
 *
 * Their event destinations (the same EventBridge destination, plus OPEN and CLICK as tracked) are
 * the delivery lifecycle's (`delivery-lifecycle.ts`); IAM grants name all four (`configurationSetArns`).
 */
import type { Stack } from 'aws-cdk-lib';
import { ConfigurationSet, EmailSendingEvent, HttpsPolicy, SuppressionReasons } from 'aws-cdk-lib/aws-ses';
import type { ConfigurationSetProps } from 'aws-cdk-lib/aws-ses';
import { COMBINATIONS, trackedConfigurationSets } from '../../functions/shared/mail/tracking';
import type { Tracking } from '../../functions/shared/mail/tracking';
import type { StackSettings } from './settings';

export interface TrackedConfigurationSet {
  readonly set: ConfigurationSet;
  readonly tracking: Tracking;
}

export interface ConfigurationSets {
  /** Untracked mail's, and SES_CONFIGURATION_SET of the functions: the tracked sets' names derive from it. */
  readonly base: ConfigurationSet;
  /** Opens only, clicks only, both. */
  readonly tracked: readonly TrackedConfigurationSet[];
}

const TRACKED = [
  { key: 'opens', id: 'TrackOpensConfigurationSet', tracking: COMBINATIONS.opens },
  { key: 'clicks', id: 'TrackClicksConfigurationSet', tracking: COMBINATIONS.clicks },
  { key: 'both', id: 'TrackOpensClicksConfigurationSet', tracking: COMBINATIONS.both },
] as const;

export function addConfigurationSets(stack: Stack, settings: StackSettings): ConfigurationSets {
  // SES's own suppression (the account-level list) for these sets' messages too, so SES and the
  // service's per-Organization list agree on hard bounces and complaints. A tracked message is
  // the same mail to SES's reputation, so its set keeps the same options.
  const common: ConfigurationSetProps = {
    reputationMetrics: true,
    sendingEnabled: true,
    suppressionReasons: SuppressionReasons.BOUNCES_AND_COMPLAINTS,
  };
  const base = new ConfigurationSet(stack, 'ConfigurationSet', { ...common, vdmOptions: { engagementMetrics: false } });
  // The base's name is CloudFormation's, known at deploy time only: the tracked names are tokens
  // that resolve to `<base>-track-…`, exactly what the send path derives from SES_CONFIGURATION_SET.
  const names = trackedConfigurationSets(base.configurationSetName);
  const redirect = settings.trackingDomain ? { customTrackingRedirectDomain: settings.trackingDomain, customTrackingHttpsPolicy: HttpsPolicy.REQUIRE } : {};
  const tracked = TRACKED.map(({ key, id, tracking }) => ({
    set: new ConfigurationSet(stack, id, { ...common, ...redirect, configurationSetName: names[key] }),
    tracking,
  }));
  return { base, tracked };
}

/** Every set, the base first. */
export function allConfigurationSets(sets: ConfigurationSets): ConfigurationSet[] {
  return [sets.base, ...sets.tracked.map(({ set }) => set)];
}

/** The events a set's destination publishes beyond the delivery events: OPEN and CLICK as it tracks them. */
export function trackingEvents(tracking: Tracking): EmailSendingEvent[] {
  return [...(tracking.opens ? [EmailSendingEvent.OPEN] : []), ...(tracking.clicks ? [EmailSendingEvent.CLICK] : [])];
}

/** The ARNs of all four sets, for the statements that send through them or associate them with tenants. */
export function configurationSetArns(stack: Stack, sets: ConfigurationSets): string[] {
  return allConfigurationSets(sets).map((set) => stack.formatArn({ service: 'ses', resource: 'configuration-set', resourceName: set.configurationSetName }));
}
