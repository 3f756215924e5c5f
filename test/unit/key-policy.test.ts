import { describe, expect, it } from '@jest/globals';
import { parseEmailAddress } from '../../functions/shared/domain/email-address';
import {
  KeyPolicyError,
  allowsScope,
  allowsSender,
  isExpired,
  parseExpiresIn,
  parseScopes,
  parseSenders,
  readKeyPolicy,
  sendersOutside,
} from '../../functions/shared/domain/key-policy';

const NOW = Date.parse('2026-11-24T10:00:00.000Z');
const address = (text: string) => parseEmailAddress(text)!;

describe('key policy', () => {
  it('reads scopes in their canonical order, each once', () => {
    expect(parseScopes('status, send,send')).toEqual(['send', 'status']);
    expect(parseScopes(['templates', 'cancel'])).toEqual(['cancel', 'templates']);
  });

  it.each([['sned'], ['send,'], [''], ['send,,status'], ['SEND']])('refuses the scope list %p, naming what is wrong', (list) => {
    expect(() => parseScopes(list)).toThrow(KeyPolicyError);
  });

  it('names every unknown scope', () => {
    expect(() => parseScopes('send,admin,all')).toThrow('unknown scopes "admin", "all"; the scopes are send, status, cancel, templates');
  });

  it('reads senders as stored identities: domains in Punycode, addresses lower-case', () => {
    expect(parseSenders('Example.COM, Billing@Example.com,bücher.example')).toEqual(['example.com', 'billing@example.com', 'xn--bcher-kva.example']);
  });

  it.each([[''], [','], ['example.com,'], ['not a domain'], ['a@@b.example']])('refuses the sender list %p', (list) => {
    expect(() => parseSenders(list)).toThrow(KeyPolicyError);
  });

  it('turns days and hours into an instant from now', () => {
    expect(parseExpiresIn('90d', NOW)).toBe('2027-02-22T10:00:00.000Z');
    expect(parseExpiresIn('12h', NOW)).toBe('2026-11-24T22:00:00.000Z');
  });

  it.each([['0d'], ['-5d'], ['0h'], ['90'], ['90m'], ['1.5d'], ['3651d'], ['']])('refuses the expiry %p', (text) => {
    expect(() => parseExpiresIn(text, NOW)).toThrow(KeyPolicyError);
  });

  it('finds the senders none of the Organizations allow', () => {
    const orgs = [new Set(['example.com']), new Set(['ceo@other.example'])];
    expect(sendersOutside(['example.com', 'billing@example.com', 'ceo@other.example'], orgs)).toEqual([]);
    expect(sendersOutside(['other.example', 'cfo@other.example', 'sub.example.com'], orgs)).toEqual(['other.example', 'cfo@other.example', 'sub.example.com']);
  });

  it('allows everything without limits, and only what is listed with them', () => {
    expect(allowsScope({}, 'send')).toBe(true);
    expect([allowsScope({ scopes: ['status'] }, 'send'), allowsScope({ scopes: ['status'] }, 'status')]).toEqual([false, true]);
    expect(allowsSender({}, address('a@anything.example'))).toBe(true);
    const limited = { senders: ['example.com', 'ceo@other.example'] };
    expect([address('noreply@example.com'), address('ceo@other.example'), address('cfo@other.example')].map((from) => allowsSender(limited, from))).toEqual([true, true, false]);
  });

  it('expires at its instant, not before', () => {
    const policy = { expiresAt: '2026-11-24T10:00:00.000Z' };
    expect([isExpired(policy, NOW - 1), isExpired(policy, NOW), isExpired({}, NOW)]).toEqual([false, true, false]);
  });

  it('reads a stored policy, narrowing a value of the wrong type to nothing rather than to everything', () => {
    expect(readKeyPolicy({})).toEqual({});
    expect(readKeyPolicy({ keyScopes: ['status', 'bogus'], keySenders: ['example.com'], keyExpiresAt: '2027-01-01T00:00:00.000Z' })).toEqual({
      scopes: ['status'],
      senders: ['example.com'],
      expiresAt: '2027-01-01T00:00:00.000Z',
    });
    expect(readKeyPolicy({ keyScopes: 'send', keySenders: 7 })).toEqual({ scopes: [], senders: [] });
  });
});
