import { describe, expect, it } from '@jest/globals';
import { ConfigError, DEFAULTS, loadConfig } from '../../functions/shared/runtime/config';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({ TABLE_NAME: 't' });
    expect(config).toMatchObject({
      tableName: 't',
      maxMessages: 100,
      maxBodyBytes: 5 * 1024 * 1024,
      sendConcurrency: DEFAULTS.sendConcurrency,
      authCacheSeconds: 30,
      dynamodbEndpoint: undefined,
      sesEndpoint: undefined,
      sesConfigurationSet: undefined,
    });
  });

  it('reads every setting', () => {
    const config = loadConfig({
      TABLE_NAME: 't',
      AWS_REGION: 'eu-west-1',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
      SES_ENDPOINT: 'http://127.0.0.1:8005',
      SES_CONFIGURATION_SET: 'cs',
      MAX_MESSAGES: '10',
      MAX_BODY_BYTES: '2048',
      SEND_CONCURRENCY: '4',
      AUTH_CACHE_SECONDS: '0',
      SEND_DEADLINE_MS: '1000',
    });
    expect(config).toMatchObject({ region: 'eu-west-1', maxMessages: 10, maxBodyBytes: 2048, sendConcurrency: 4, authCacheSeconds: 0, sendDeadlineMs: 1000, sesConfigurationSet: 'cs' });
  });

  it('reads the reputation thresholds and SES_TENANTS, with SES\'s own review thresholds and tenants off by default', () => {
    expect(loadConfig({ TABLE_NAME: 't' })).toMatchObject({ reputation: { bounceRate: 0.05, complaintRate: 0.001, minSends: 200 }, sesTenants: false });
    expect(loadConfig({ TABLE_NAME: 't', REPUTATION_BOUNCE_RATE: '0.1', REPUTATION_COMPLAINT_RATE: '0.005', REPUTATION_MIN_SENDS: '20', SES_TENANTS: 'true' })).toMatchObject({
      reputation: { bounceRate: 0.1, complaintRate: 0.005, minSends: 20 },
      sesTenants: true,
    });
    expect(() => loadConfig({ TABLE_NAME: 't', REPUTATION_BOUNCE_RATE: '5%', REPUTATION_COMPLAINT_RATE: '2', REPUTATION_MIN_SENDS: '0', SES_TENANTS: 'yes' })).toThrow(
      /REPUTATION_BOUNCE_RATE must be a number from 0.000001 to 1, got "5%".*REPUTATION_COMPLAINT_RATE must be a number from 0.000001 to 1, got "2".*REPUTATION_MIN_SENDS must be a whole number from 1 to 100000000, got "0".*SES_TENANTS must be true or false, got "yes"/,
    );
  });

  it('fails loudly without TABLE_NAME', () => {
    expect(() => loadConfig({})).toThrow(/TABLE_NAME is required/);
  });

  it.each([
    ['AUTH_CACHE_SECONDS', '61'],
    ['AUTH_CACHE_SECONDS', '-1'],
    ['MAX_MESSAGES', 'ten'],
    ['MAX_MESSAGES', '0'],
    ['SEND_CONCURRENCY', '1.5'],
    ['DYNAMODB_ENDPOINT', 'not a url'],
  ])('fails loudly for %s=%s, naming it', (name, value) => {
    expect(() => loadConfig({ TABLE_NAME: 't', [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ TABLE_NAME: 't', [name]: value })).toThrow(name);
  });

  it('lists every bad variable at once', () => {
    expect(() => loadConfig({ MAX_MESSAGES: 'x' })).toThrow(/TABLE_NAME.*MAX_MESSAGES|MAX_MESSAGES.*TABLE_NAME/);
  });
});
