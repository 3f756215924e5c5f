/**
 * The pages a problem document's `type` points at (`/problems/<slug>`): what each problem means
 * and what to do about it, one entry per slug the service or the local gateway produces. A test
 * finds every slug in the code and fails when one has no entry here, so a new problem type cannot
 * ship with a `type` that leads nowhere.
 */
import { escapeHtml, htmlDocument } from '../shared/http/html';

export interface ProblemPage {
  /** The HTTP status(es) a problem of this type is answered with. */
  readonly status: string;
  readonly title: string;
  /** What happened and what to do, in plain sentences. */
  readonly explanation: string;
}

export const PROBLEM_PAGES: Readonly<Record<string, ProblemPage>> = {
  validation: { status: '400', title: 'Request body is invalid', explanation: 'The JSON body breaks one or more rules (a missing or unknown field, a bad address, a time in neither accepted shape, too many recipients…). Every problem found is listed in `errors`, each with the JSON pointer of the value at fault. Nothing was sent: correct every listed value and send the whole request again.' },
  'malformed-json': { status: '400', title: 'Request body is not valid JSON', explanation: 'The body could not be read as one JSON object: a syntax error, bytes that are not UTF-8, a duplicated member name, nesting that is too deep, or an empty body. `detail` says which. Nothing was sent.' },
  'malformed-request': { status: '400', title: 'Malformed HTTP request', explanation: 'The local stack could not read the request as HTTP/1.1, so it did not pass it on. Check the client or proxy that built it.' },
  'invalid-idempotency-key': { status: '400', title: 'Invalid Idempotency-Key header', explanation: 'The `Idempotency-Key` header must be 1 to 255 printable ASCII characters (space to `~`), given once. Nothing was sent; send again with a valid key, or without one.' },
  'invalid-parameter': { status: '400', title: 'Invalid query parameter', explanation: 'A query parameter of the settings API has a value it does not accept; `detail` names it and the accepted values.' },
  unauthorized: { status: '401', title: 'Authentication required', explanation: 'The request has no `Authorization` header. Send `Authorization: Bearer <API key>`; users get their key on the settings page.' },
  'invalid-token': { status: '401', title: 'Invalid API key', explanation: 'The `Authorization` header is not `Bearer <API key>`, or the key is unknown, revoked or replaced by a rotation. Use the current key from the settings page. The key itself is never echoed back.' },
  'invalid-access-token': { status: '401', title: 'Sign-in required', explanation: 'The settings API needs a valid access token from the sign-in provider; it is missing, expired or not for this service. Sign in on the settings page again.' },
  'organization-forbidden': { status: '403', title: 'Not allowed in this Organization', explanation: 'The Organization named in the body does not exist, or the key\'s user is not a member of it (the two read the same, so Organization ids cannot be guessed). Check `OrganizationId`, or ask the operator to add the user to it. Nothing was sent.' },
  'organization-paused': { status: '403', title: 'Organization paused', explanation: 'The Organization\'s bounce or complaint rate crossed its threshold, so its sending is paused to protect the account\'s reputation. Nothing was sent. Clean the recipient lists, then ask the operator to resume it (`org resume`).' },
  'sender-forbidden': { status: '403', title: 'Sender not allowed for this Organization', explanation: 'A message\'s `From` is not one of the Organization\'s sender identities (a domain, or one exact address). `errors` names each such message. Nothing was sent; use an allowed sender, or ask the operator to add one (`sender add`).' },
  'insufficient-scope': { status: '403', title: 'API key lacks the scope for this call', explanation: 'The API key is limited to some calls (its scopes), and this call is not one of them; `detail` and the `WWW-Authenticate` header name the scope it needs. Nothing was done. Use a key with that scope, or ask for one.' },
  'no-access': { status: '403', title: 'No access', explanation: 'The signed-in person is not a user of this service. The operator creates users with the admin CLI (`user create`).' },
  'not-found': { status: '404', title: 'Not found', explanation: 'Nothing is served at this path; `detail` names the routes served near it (under the same first segments), else `POST /v1.2/email/send`. Check the base URL and the path: paths match exactly, with no trailing slash.' },
  'no-key': { status: '404', title: 'You have no API key', explanation: 'The signed-in user has no API key to show, rotate or revoke. Generate one on the settings page.' },
  'template-not-found': { status: '404', title: 'Template not found', explanation: 'The Organization has no template of that name, or the template has no such version (`detail` says which). Templates are per Organization: list them with `GET /v1.2/templates`, or see them under Templates on the settings page.' },
  'not-suppressed': { status: '404', title: 'Not on the suppression list', explanation: 'The address to remove is not on the Organization\'s suppression list (already removed, or never there).' },
  'method-not-allowed': { status: '405', title: 'Method not allowed', explanation: 'The path exists but not with this method. The `Allow` header lists the methods it serves (POST for the send, status and cancel endpoints).' },
  'idempotency-in-progress': { status: '409', title: 'Request with this Idempotency-Key is in progress', explanation: 'A request with the same `Idempotency-Key` and body is still running. Retry after `Retry-After` seconds to get its answer; nothing is sent twice.' },
  'key-exists': { status: '409', title: 'You already have an API key', explanation: 'Each user has at most one key. To replace it, rotate it (the old key stops working within the auth cache lifetime).' },
  'key-changed': { status: '409', title: 'Your API key changed meanwhile', explanation: 'The key was rotated or revoked elsewhere (another tab, the operator) between reading and changing it. Reload the settings page and try again.' },
  'key-not-revealable': { status: '409', title: 'Your API key cannot be shown again', explanation: 'This key was made while keys were shown once only, so no sealed copy exists. Rotate it to get a new key you can show.' },
  'misdirected-request': { status: '421', title: 'Misdirected request', explanation: 'The local stack answers only to `Host: 127.0.0.1:<port>` or `localhost:<port>`, which keeps web pages on other names (DNS rebinding) away from it. Call it by one of those.' },
  'payload-too-large': { status: '413', title: 'Request body too large', explanation: 'The body is larger than the service accepts (`detail` says the limit, 5 MiB by default for a send). Nothing was sent; split the messages over several requests.' },
  'unsupported-media-type': { status: '415', title: 'Unsupported media type', explanation: 'The body must be sent with `Content-Type: application/json` (optionally `; charset=utf-8`).' },
  'idempotency-key-reused': { status: '422', title: 'Idempotency-Key reused with a different body', explanation: 'This `Idempotency-Key` was used in the last 24 hours by the same user for a different request. Nothing was sent. Use a new key for a new request.' },
  'request-header-fields-too-large': { status: '431', title: 'Request header fields too large', explanation: 'The request line and headers together are larger than the local stack reads. Send fewer or shorter headers.' },
  internal: { status: '500', title: 'Internal error', explanation: 'The service failed unexpectedly. Nothing about the fault is shown; the operator finds it in the logs by the `requestId`. Quote it when reporting the problem. With an `Idempotency-Key`, retrying is safe.' },
  'bad-gateway': { status: '502', title: 'Bad gateway', explanation: 'The local stack\'s gateway could not complete the call to the function. Its console says why; retry once it runs again.' },
  'storage-unavailable': { status: '503', title: 'Service temporarily unavailable', explanation: 'The service\'s table (DynamoDB) did not answer or throttled, so nothing was sent. Retry after `Retry-After` seconds.' },
  'identity-provider-unavailable': { status: '503', title: 'Sign-in provider unavailable', explanation: 'The sign-in provider could not be reached to check the access token. Retry in a moment.' },
  starting: { status: '503', title: 'Starting', explanation: 'The local stack is still starting. Retry after `Retry-After` seconds.' },
  'gateway-timeout': { status: '504', title: 'Gateway timeout', explanation: 'The function did not answer within its time limit. Retry; with an `Idempotency-Key` a retry never sends a message twice.' },
};

/** `text` with `code spans` as `<code>`, everything escaped. */
function inline(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

/** The page for one problem type, or undefined for a slug the service does not produce. */
export function problemPageHtml(slug: string): string | undefined {
  if (!Object.hasOwn(PROBLEM_PAGES, slug)) return undefined;
  const { status, title, explanation } = PROBLEM_PAGES[slug]!;
  return htmlDocument(`${title} (${slug})`, '', `<h1>${escapeHtml(title)}</h1>\n<p>HTTP ${status}, problem type <code>${escapeHtml(slug)}</code>.</p>\n<p>${inline(explanation)}</p>\n<p><a href="../problems">Every problem type</a></p>`);
}

/** The index of every problem type, served at `/problems` (its links are relative to that path). */
export function problemIndexHtml(): string {
  const rows = Object.entries(PROBLEM_PAGES).map(([slug, { status, title }]) => `<li><a href="problems/${escapeHtml(slug)}">${escapeHtml(slug)}</a> (${status}): ${escapeHtml(title)}</li>`);
  return htmlDocument('Problem types', '', `<h1>Problem types</h1>\n<p>Every error of this API is an RFC 9457 problem document whose <code>type</code> points at one of these pages.</p>\n<ul>\n${rows.join('\n')}\n</ul>`);
}
