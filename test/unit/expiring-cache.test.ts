import { describe, expect, it } from '@jest/globals';
import { ExpiringCache } from '../../functions/shared/runtime/expiring-cache';

/** A clock the test moves by hand. */
function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe('ExpiringCache', () => {
  it('answers an entry until its time-to-live has passed, and never after', () => {
    const time = clock();
    const cache = new ExpiringCache<string, number>({ max: 10, ttlMs: 1_000, now: time.now });
    cache.set('a', 1);
    time.advance(999);
    expect(cache.get('a')).toBe(1);
    time.advance(1);
    expect(cache.get('a')).toBeUndefined();
    // Set again, it lives again.
    cache.set('a', 2);
    expect(cache.get('a')).toBe(2);
  });

  it('takes a time-to-live per entry, keeps nothing for one of 0 or less, and without one keeps an entry until it is pushed out', () => {
    const time = clock();
    const cache = new ExpiringCache<string, string>({ max: 10, now: time.now });
    cache.set('short', 'x', 10);
    cache.set('none', 'y', 0);
    cache.set('gone', 'z', -5);
    cache.set('forever', 'w');
    // A time-to-live that is no number keeps nothing that is ever answered, by get or replace.
    cache.set('nan', 'v', Number.NaN);
    cache.replace('nan', 'u');
    time.advance(10 * 365 * 24 * 3_600_000);
    expect([cache.get('short'), cache.get('none'), cache.get('gone'), cache.get('forever'), cache.get('nan')]).toEqual([undefined, undefined, undefined, 'w', undefined]);
  });

  it('holds at most max entries, pushing out the least recently used', () => {
    const cache = new ExpiringCache<string, number>({ max: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the most recently used
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
  });

  it('keeps a replaced entry where it was in the order of use, and frees the slot of an expired entry that is read', () => {
    const time = clock();
    const cache = new ExpiringCache<string, number>({ max: 2, ttlMs: 1_000, now: time.now });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.replace('a', 10); // a stays the least recently used
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 2, 3]);
    cache.set('short', 4, 10);
    time.advance(10);
    expect(cache.get('short')).toBeUndefined(); // expired: gone, so c, set before it, still has its slot
    cache.set('d', 5);
    expect([cache.get('c'), cache.get('d')]).toEqual([3, 5]);
  });

  it('peeks and answers has for a live entry only, leaving the order of use as it is, and clears', () => {
    const time = clock();
    const cache = new ExpiringCache<string, number>({ max: 2, ttlMs: 1_000, now: time.now });
    cache.set('a', 1);
    cache.set('b', 2);
    expect([cache.peek('a'), cache.has('a'), cache.peek('x'), cache.has('x')]).toEqual([1, true, undefined, false]);
    // Peeked and asked, a is still the least recently used: c pushes it out.
    cache.set('c', 3);
    expect([cache.has('a'), cache.peek('b'), cache.peek('c')]).toEqual([false, 2, 3]);
    time.advance(1_000);
    expect([cache.peek('b'), cache.has('b'), cache.has('c')]).toEqual([undefined, false, false]);
    cache.set('d', 4, 5_000);
    cache.clear();
    expect([cache.peek('d'), cache.has('d')]).toEqual([undefined, false]);
  });

  it('replaces a live entry\'s value without extending its life, and does nothing for a missing or expired one', () => {
    const time = clock();
    const cache = new ExpiringCache<string, string>({ max: 10, ttlMs: 1_000, now: time.now });
    cache.set('key', 'first');
    time.advance(600);
    cache.replace('key', 'second');
    expect(cache.get('key')).toBe('second');
    time.advance(400);
    expect(cache.get('key')).toBeUndefined();
    cache.replace('key', 'third');
    cache.replace('never', 'fourth');
    expect([cache.get('key'), cache.get('never')]).toEqual([undefined, undefined]);
  });

  it('takes any string as a key, those of Object.prototype too', () => {
    const cache = new ExpiringCache<string, number>({ max: 10 });
    expect([cache.get('__proto__'), cache.get('constructor'), cache.get('toString')]).toEqual([undefined, undefined, undefined]);
    cache.set('__proto__', 1);
    cache.set('constructor', 2);
    expect([cache.get('__proto__'), cache.get('constructor'), cache.get('hasOwnProperty')]).toEqual([1, 2, undefined]);
  });
});
