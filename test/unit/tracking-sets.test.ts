import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { configurationSetFor, NO_TRACKING, trackedConfigurationSets, trackingOfConfigurationSet } from '../../functions/shared/mail/tracking';

describe('tracking configuration sets', () => {
  it('sends untracked mail through the base set, unchanged', () => {
    expect(configurationSetFor('EmailApi-Set', NO_TRACKING)).toBe('EmailApi-Set');
    expect(configurationSetFor(undefined, NO_TRACKING)).toBeUndefined();
    expect(trackingOfConfigurationSet('EmailApi-Set')).toEqual(NO_TRACKING);
    expect(trackingOfConfigurationSet(undefined)).toEqual(NO_TRACKING);
  });

  it('names one set per combination, and reads each name back as its combination', () => {
    fc.assert(
      fc.property(fc.option(fc.stringMatching(/^[A-Za-z0-9_-]{1,30}$/), { nil: undefined }), fc.boolean(), fc.boolean(), (base, opens, clicks) => {
        const name = configurationSetFor(base, { opens, clicks });
        expect(trackingOfConfigurationSet(name)).toEqual(opens || clicks ? { opens, clicks } : NO_TRACKING);
      }),
      { seed: 37, numRuns: 300 },
    );
  });

  it('lists the three tracked sets the stack creates', () => {
    expect(Object.values(trackedConfigurationSets('S')).sort()).toEqual(['S-track-clicks', 'S-track-opens', 'S-track-opens-clicks']);
    expect(trackedConfigurationSets(undefined).both).toBe('track-opens-clicks');
  });
});
