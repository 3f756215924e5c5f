/**
 * Where a webhook may point: an https URL at a public address; on the local stack also this
 * machine (127.0.0.1, localhost, [::1]), over plain http as well, and only there (in AWS events
 * would cross the internet unencrypted, and this machine is the function's own sandbox). A name
 * is checked again at delivery, once resolved (functions/webhooks/post.ts); an address written
 * in the URL is checked here, whatever its spelling (see public-address.ts).
 */
import { addressRange, isLocalhostName } from './public-address';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Why the URL cannot be used, or undefined when it can. */
export function webhookUrlProblem(url: string, allowLoopbackHttp: boolean): string | undefined {
  if (!URL.canParse(url)) return `"${url}" is not a URL`;
  const parsed = new URL(url);
  if (parsed.username || parsed.password) return 'the webhook URL must not carry credentials';
  const local = allowLoopbackHttp && LOOPBACK_HOSTS.has(parsed.hostname);
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && local)) {
    return allowLoopbackHttp ? 'the webhook URL must be https://, or http:// to 127.0.0.1 on the local stack' : 'the webhook URL must be https://';
  }
  if (local) return undefined;
  const range = addressRange(parsed.hostname);
  if (isLocalhostName(parsed.hostname) || (range !== undefined && range !== 'unicast')) {
    return `the webhook URL must point to a public address, not ${parsed.hostname}${range ? ` (${range})` : ''}`;
  }
  return undefined;
}
