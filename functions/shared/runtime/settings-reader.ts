/**
 * One way to read settings, for the function (environment variables), the CDK stack (context
 * values) and the local stack (its environment): every value is checked, every problem is
 * collected, and one error names them all. Values may arrive as strings (environment, `-c k=v`)
 * or typed (cdk.json).
 */

/** Where values come from: a variable or context key to its raw value. */
export type SettingSource = (name: string) => unknown;

export function fromEnv(env: Readonly<Record<string, string | undefined>>): SettingSource {
  return (name) => env[name];
}

export class SettingsReader {
  private readonly problems: string[] = [];

  /** `label` names a setting in messages, e.g. `MAX_MESSAGES` or `context "maxMessages"`. */
  constructor(
    private readonly source: SettingSource,
    private readonly label: (name: string) => string = (name) => name,
  ) {}

  /** The raw value, or undefined when unset or blank. */
  raw(name: string): unknown {
    const value = this.source(name);
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
    return value;
  }

  text(name: string): string | undefined;
  text(name: string, fallback: string): string;
  text(name: string, fallback?: string): string | undefined {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (typeof value !== 'string') return this.refuse(name, 'must be a string', value, fallback);
    return value;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) return this.refuse(name, `must be a whole number from ${min} to ${max}`, value, fallback);
    return n;
  }

  /** A positive decimal number, or undefined when unset. */
  decimal(name: string, min: number, max: number): number | undefined {
    const value = this.raw(name);
    if (value === undefined) return undefined;
    const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
    if (!Number.isFinite(n) || n < min || n > max) return this.refuse(name, `must be a number from ${min} to ${max}`, value, undefined);
    return n;
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    return this.refuse(name, 'must be true or false', value, fallback);
  }

  port(name: string, fallback: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || !/^\d+$/.test(value) || Number(value) > 65_535) return this.refuse(name, 'must be a port number from 0 to 65535', value, fallback);
    return Number(value);
  }

  /** An http(s) URL: the one rule for every endpoint override. */
  endpoint(name: string): string | undefined {
    const value = this.text(name);
    if (value === undefined) return undefined;
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) return this.refuse(name, 'must be an http(s) URL', value, undefined);
    return value;
  }

  /** How messages name a setting (its `label`), for the problems of checks of the caller's own. */
  name(setting: string): string {
    return this.label(setting);
  }

  /** Records a problem found by a check of the caller's own. */
  problem(message: string): void {
    this.problems.push(message);
  }

  /** Throws one error naming every problem found, if there was any. */
  finish(fail: (message: string) => Error): void {
    if (this.problems.length > 0) throw fail(this.problems.join('; '));
  }

  private refuse<T>(name: string, rule: string, value: unknown, fallback: T): T {
    this.problems.push(`${this.label(name)} ${rule}, got ${JSON.stringify(value)}`);
    return fallback;
  }
}
