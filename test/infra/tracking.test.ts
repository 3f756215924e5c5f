/**
 * Open and click tracking in the stack (CONTRACT section 17 item 3): four configuration sets,
 * alike but for tracking; each one's event destination publishing OPEN and CLICK exactly as the
 * name the send path picks it by says; the custom redirect domain on the tracked sets only, over
 * HTTPS only; the rule taking all four sets' events; and sending, by both sending functions and
 * through every tenant, allowed through exactly these four sets.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Template } from 'aws-cdk-lib/assertions';
import { EVENTBRIDGE_DETAIL_TYPES } from '../../functions/shared/delivery/ses-event';
import { configurationSetFor, trackingOfConfigurationSet } from '../../functions/shared/mail/tracking';
import type { Tracking } from '../../functions/shared/mail/tracking';
import { buildStack, configurationSetArns, synthesised } from './support';

type Json = Record<string, any>;

const DELIVERY_EVENTS = ['send', 'delivery', 'bounce', 'complaint', 'reject', 'deliveryDelay', 'renderingFailure'];
/** What CloudFormation's generated name for the base set is: its logical id (at most 51 characters) and 12 random ones. */
const SES_NAME_LIMIT = 64;
const BASE = 'EmailSendApi-base';

let parts: ReturnType<typeof synthesised>;
let sets: Record<string, Json>;
let baseId: string;
beforeAll(() => {
  parts = synthesised();
  sets = parts.template.findResources('AWS::SES::ConfigurationSet');
  baseId = parts.id(parts.stack.configurationSet);
});

/** A tracked set's name with the base's (deploy-time) name put in: exactly the string SES will know it by. */
function resolvedName(set: Json): string {
  const name = set.Properties.Name;
  if (name === undefined) return BASE;
  expect(name['Fn::Join'][1][0]).toEqual({ Ref: baseId });
  return `${BASE}${name['Fn::Join'][1].slice(1).join('')}`;
}

function destinationOf(setId: string): Json {
  const destinations = Object.values(parts.template.findResources('AWS::SES::ConfigurationSetEventDestination')).filter((d) => d.Properties.ConfigurationSetName.Ref === setId);
  expect(destinations).toHaveLength(1);
  return destinations[0]!.Properties.EventDestination;
}

describe('configuration sets', () => {
  it('are four: the base, and one per tracked combination named <base>-track-…, as the send path names them', () => {
    expect(Object.keys(sets)).toHaveLength(4);
    const names = Object.values(sets).map(resolvedName).sort();
    const combinations: Tracking[] = [{ opens: true, clicks: false }, { opens: false, clicks: true }, { opens: true, clicks: true }];
    expect(names).toEqual([BASE, ...combinations.map((tracking) => configurationSetFor(BASE, tracking)!)].sort());
    expect(names).toEqual([BASE, `${BASE}-track-clicks`, `${BASE}-track-opens`, `${BASE}-track-opens-clicks`]);
  });

  it('publish OPEN and CLICK exactly as the set\'s name says it tracks them, beside the same delivery events to the same bus', () => {
    const bus = destinationOf(baseId).EventBridgeDestination;
    for (const [setId, set] of Object.entries(sets)) {
      const { opens, clicks } = trackingOfConfigurationSet(resolvedName(set));
      const destination = destinationOf(setId);
      expect({ setId, destination }).toEqual({
        setId,
        destination: { Enabled: true, EventBridgeDestination: bus, MatchingEventTypes: [...DELIVERY_EVENTS, ...(opens ? ['open'] : []), ...(clicks ? ['click'] : [])] },
      });
    }
    // The base set tracks nothing: untracked mail gets no pixel and no rewritten link.
    expect(destinationOf(baseId).MatchingEventTypes).toEqual(DELIVERY_EVENTS);
  });

  it('keep the base set\'s reputation metrics, sending and suppression options on every tracked set', () => {
    const options = (set: Json) => ({ ReputationOptions: set.Properties.ReputationOptions, SendingOptions: set.Properties.SendingOptions, SuppressionOptions: set.Properties.SuppressionOptions });
    const base = options(sets[baseId]!);
    expect(base).toEqual({ ReputationOptions: { ReputationMetricsEnabled: true }, SendingOptions: { SendingEnabled: true }, SuppressionOptions: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] } });
    for (const set of Object.values(sets)) expect(options(set)).toEqual(base);
  });

  it('turn engagement tracking off on the base set, so an account-wide VDM setting cannot track untracked mail', () => {
    expect(sets[baseId]!.Properties.VdmOptions).toEqual({ DashboardOptions: { EngagementMetrics: 'DISABLED' } });
    expect(sets[baseId]!.Properties.TrackingOptions).toBeUndefined();
  });

  it('fit SES\'s 64-character names: CloudFormation\'s name for the base and the longest suffix', () => {
    // CloudFormation names an unnamed set `<logical id>-<12 random characters>`.
    const longest = Math.max(...Object.values(sets).map((set) => resolvedName(set).length - BASE.length));
    expect(baseId.length + 1 + 12 + longest).toBeLessThanOrEqual(SES_NAME_LIMIT);
  });
});

describe('the custom redirect domain (trackingDomain)', () => {
  it('is SES\'s own by default: no tracking options on any set', () => {
    for (const set of Object.values(sets)) expect(set.Properties.TrackingOptions).toBeUndefined();
  });

  it('when set, is the tracked sets\' redirect domain, HTTPS only, and never the base set\'s', () => {
    const { stack } = buildStack({ trackingDomain: 'Track.Example.com' });
    const custom = Template.fromStack(stack).findResources('AWS::SES::ConfigurationSet');
    const base = stack.getLogicalId(stack.configurationSet.node.defaultChild as never);
    expect(Object.keys(custom)).toHaveLength(4);
    for (const [setId, set] of Object.entries(custom)) {
      expect({ setId, options: set.Properties.TrackingOptions }).toEqual({ setId, options: setId === base ? undefined : { CustomRedirectDomain: 'track.example.com', HttpsPolicy: 'REQUIRE' } });
    }
  });

  it('is read from TRACKING_DOMAIN in the environment too, the context value winning', () => {
    const before = process.env.TRACKING_DOMAIN;
    process.env.TRACKING_DOMAIN = 'env-track.example.com';
    try {
      const domains = (context: Record<string, string>) =>
        Object.values(Template.fromStack(buildStack(context).stack).findResources('AWS::SES::ConfigurationSet')).flatMap((set) => set.Properties.TrackingOptions?.CustomRedirectDomain ?? []);
      expect(domains({})).toEqual(Array(3).fill('env-track.example.com'));
      expect(domains({ trackingDomain: 'track.example.com' })).toEqual(Array(3).fill('track.example.com'));
    } finally {
      if (before === undefined) delete process.env.TRACKING_DOMAIN;
      else process.env.TRACKING_DOMAIN = before;
    }
  });

  it('must be a domain name, and not the API\'s custom domain', () => {
    expect(() => buildStack({ trackingDomain: 'https://track.example.com' })).toThrow(/context "trackingDomain" is not a domain name/);
    const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666';
    expect(() => buildStack({ trackingDomain: 'mail.example.com', customDomainName: 'mail.example.com', customDomainCertificateArn: certificateArn })).toThrow(/"trackingDomain" must differ from "customDomainName"/);
  });
});

describe('events of the tracked sets', () => {
  it('reach the events queue: the rule matches all four sets and every detail type the events function records', () => {
    const rules = Object.values(parts.template.findResources('AWS::Events::Rule'));
    expect(rules).toHaveLength(1);
    const pattern = rules[0]!.Properties.EventPattern;
    expect(pattern['detail-type']).toEqual(Object.values(EVENTBRIDGE_DETAIL_TYPES));
    expect(pattern['detail-type']).toEqual(expect.arrayContaining(['Email Opened', 'Email Clicked']));
    expect(pattern.detail.mail.tags['ses:configuration-set'].map((ref: Json) => ref.Ref).sort()).toEqual(Object.keys(sets).sort());
  });
});

describe('IAM', () => {
  const statement = (policy: Json, sid: string) => policy.Properties.PolicyDocument.Statement.find((s: Json) => s.Sid === sid);
  const roleDefaultPolicy = (role: string) =>
    Object.values(parts.template.findResources('AWS::IAM::Policy')).find((p) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: parts.logicalIdOf(role) }]))!;

  it('lets the send and scheduled-send functions send through exactly the four sets (and the identities and tenants)', () => {
    for (const role of ['SendFunctionRole', 'ScheduledSendFunctionRole']) {
      const sendEmail = statement(roleDefaultPolicy(role), 'SendEmail');
      const sets = sendEmail.Resource.filter((arn: Json) => JSON.stringify(arn).includes(':configuration-set/'));
      expect({ role, sets }).toEqual({ role, sets: configurationSetArns(parts.stack) });
      expect(sendEmail.Resource).toHaveLength(6);
    }
  });

  it('lets the operator associate all four sets with each tenant, and no other set', () => {
    const policy = Object.entries(parts.template.findResources('AWS::IAM::ManagedPolicy')).find(([logicalId]) => logicalId.startsWith('TenantAdministrationPolicy'))![1];
    const sets = statement(policy, 'TenantResources').Resource.filter((arn: Json) => JSON.stringify(arn).includes(':configuration-set/'));
    expect(sets).toEqual(configurationSetArns(parts.stack));
  });

  it('names no configuration set by wildcard anywhere', () => {
    expect(JSON.stringify(parts.template.toJSON())).not.toMatch(/configuration-set\/\*/);
  });
});
