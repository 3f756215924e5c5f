/**
 * Ports made on first use (functions/shared/runtime/deferred.ts): the scheduling timer, the
 * webhook queue and test mode's mailer of the send function are built this way, so a cold start
 * does not load them.
 */
import { describe, expect, it } from '@jest/globals';
import { deferred, loadedOnFirstUse, once } from '../../functions/shared/runtime/deferred';

interface Greeter {
  greet(name: string, times?: number): Promise<string>;
  count(): Promise<number>;
}

/** A real Greeter whose methods read its own state through `this`. */
class CountingGreeter implements Greeter {
  private calls = 0;
  constructor(private readonly greeting: string) {}
  async greet(name: string, times = 1): Promise<string> {
    this.calls++;
    return `${this.greeting}, ${name}`.repeat(times);
  }
  async count(): Promise<number> {
    return this.calls;
  }
}

describe('deferred ports', () => {
  it('makes nothing until a method is called, then makes the real one once, even for calls at the same moment', async () => {
    let made = 0;
    const port = deferred<Greeter>(async () => {
      made++;
      return new CountingGreeter('Hello');
    }, { greet: true, count: true });
    expect(made).toBe(0);
    const answers = await Promise.all([port.greet('Ada'), port.greet('Grace', 2), port.count()]);
    expect(answers[0]).toBe('Hello, Ada');
    expect(answers[1]).toBe('Hello, GraceHello, Grace');
    expect(made).toBe(1);
    // Every call reached the same instance, with its own `this`.
    expect(await port.count()).toBe(2);
  });

  it('does not keep a failure: the call that failed is refused, and the next one tries again', async () => {
    let attempts = 0;
    const port = deferred<Greeter>(async () => {
      attempts++;
      if (attempts === 1) throw new Error('chunk could not be loaded');
      return new CountingGreeter('Hi');
    }, { greet: true, count: true });
    await expect(port.greet('Ada')).rejects.toThrow('chunk could not be loaded');
    await expect(port.greet('Ada')).resolves.toBe('Hi, Ada');
    await port.greet('Alan');
    expect(attempts).toBe(2);
  });

  it('passes a rejection of the real method through unchanged', async () => {
    const refusal = new Error('queue refused');
    const port = deferred<Pick<Greeter, 'count'>>(async () => ({ count: () => Promise.reject(refusal) }), { count: true });
    await expect(port.count()).rejects.toBe(refusal);
  });

  it('once: shares one promise while it is pending or fulfilled', async () => {
    let made = 0;
    const get = once(async () => ++made);
    expect(await Promise.all([get(), get()])).toEqual([1, 1]);
    expect(await get()).toBe(1);
  });

  it('loadedOnFirstUse: nothing to read until loaded, then the value, synchronously; a failed load is tried again', async () => {
    let attempts = 0;
    const table = loadedOnFirstUse(async () => {
      attempts++;
      if (attempts === 1) throw new Error('chunk not found');
      return { rows: attempts };
    });
    expect(table.loaded()).toBeUndefined();
    await expect(table.load()).rejects.toThrow('chunk not found');
    expect(table.loaded()).toBeUndefined();
    const [first, second] = await Promise.all([table.load(), table.load()]);
    expect(first).toBe(second);
    expect(table.loaded()).toEqual({ rows: 2 });
    expect(attempts).toBe(2);
  });
});
