import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { MACHINE_USER_AGENTS, isMachineAgent, isMachineOpen } from '../../functions/shared/delivery/machine-opens';

const PERSON = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';

describe('the machine-open rule', () => {
  it.each([
    ['Apple Mail Privacy Protection', 'Mozilla/5.0'],
    ['Gmail', 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)'],
    ['Yahoo', 'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html'],
    ['Outlook preview', 'Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/534+ (KHTML, like Gecko) BingPreview/1.0b'],
    ['Mimecast', 'Mimecast URL Protect'],
    ['Proofpoint', 'proofpoint url defense'],
  ])('knows %s by its user agent', (_name, agent) => {
    expect(isMachineAgent(agent)).toBe(true);
  });

  it("takes people's mail clients, and a browser that merely starts like Apple's proxy, for people", () => {
    for (const agent of [PERSON, 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148', 'Microsoft Outlook 16.0', '']) {
      expect(isMachineAgent(agent)).toBe(false);
    }
  });

  it('takes an open within 2 s of the delivery for a machine, and one after for a person', () => {
    const delivered = ['2026-11-25T09:00:01.000Z'];
    expect(isMachineOpen({ at: '2026-11-25T09:00:03.000Z', userAgent: PERSON }, delivered, undefined)).toBe(true);
    expect(isMachineOpen({ at: '2026-11-25T09:00:03.001Z', userAgent: PERSON }, delivered, undefined)).toBe(false);
    // Without a recorded delivery, the send stands in; with neither, only the user agent decides.
    expect(isMachineOpen({ at: '2026-11-25T09:00:01.000Z', userAgent: PERSON }, [], '2026-11-25T09:00:00.000Z')).toBe(true);
    expect(isMachineOpen({ at: '2026-11-25T09:00:01.000Z', userAgent: PERSON }, [], undefined)).toBe(false);
  });

  it('is listed in docs/tracking.md, agent by agent', () => {
    const docs = readFileSync(new URL('../../docs/tracking.md', import.meta.url), 'utf8');
    for (const { name } of MACHINE_USER_AGENTS) expect(docs).toContain(`| ${name} |`);
  });
});
