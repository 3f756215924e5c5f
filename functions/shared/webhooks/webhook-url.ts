/**
 * Where a webhook may point: an https URL anywhere; plain http only to this machine, and only
 * where the local stack allows it (never in AWS, where events would cross the internet unencrypted).
 */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Why the URL cannot be used, or undefined when it can. */
export function webhookUrlProblem(url: string, allowLoopbackHttp: boolean): string | undefined {
  if (!URL.canParse(url)) return `"${url}" is not a URL`;
  const parsed = new URL(url);
  if (parsed.username || parsed.password) return 'the webhook URL must not carry credentials';
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol === 'http:' && allowLoopbackHttp && LOOPBACK_HOSTS.has(parsed.hostname)) return undefined;
  return allowLoopbackHttp ? 'the webhook URL must be https://, or http:// to 127.0.0.1 on the local stack' : 'the webhook URL must be https://';
}
