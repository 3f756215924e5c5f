/**
 * Errors that carry their HTTP meaning. One middleware (`problemResponses`) turns them into
 * RFC 9457 problem documents; anything else becomes a generic 500.
 */
import { wellFormed } from '../domain/unicode';

/** One problem with one part of the request, located by a JSON pointer (RFC 6901). */
export interface FieldProblem {
  readonly pointer: string;
  readonly detail: string;
}

export interface HttpProblemOptions extends ErrorOptions {
  readonly detail?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly errors?: readonly FieldProblem[];
}

/** An error the client should see, with its status, problem type slug and title. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly slug: string;
  readonly title: string;
  readonly detail: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly errors: readonly FieldProblem[] | undefined;

  constructor(status: number, slug: string, title: string, options: HttpProblemOptions = {}) {
    super(options.detail ?? title, options);
    this.name = 'HttpProblem';
    this.status = status;
    this.slug = slug;
    this.title = title;
    // Well-formed, whatever it quotes (a field name, the JSON parser's snippet of the body): an
    // answer must be I-JSON (RFC 7493), which holds no lone surrogate, even escaped.
    this.detail = options.detail === undefined ? undefined : wellFormed(options.detail);
    this.headers = options.headers ?? {};
    this.errors = options.errors?.map(({ pointer, detail }) => ({ pointer: wellFormed(pointer), detail: wellFormed(detail) }));
  }
}

/** At most this many problems are listed in one answer; the detail gives the total. */
export const MAX_LISTED_PROBLEMS = 100;
/** A pointer or detail longer than this is cut (a field name can be as long as the body). */
const MAX_PROBLEM_TEXT = 300;

/** Cut (a half pair the cut leaves is made well-formed with the rest, in `HttpProblem`). */
const cut = (text: string): string => (text.length > MAX_PROBLEM_TEXT ? `${text.slice(0, MAX_PROBLEM_TEXT - 1)}…` : text);

/**
 * The first `MAX_LISTED_PROBLEMS` problems, each cut to a sane length, and a sentence with the
 * total: no answer grows with what a request holds.
 */
function listed(errors: readonly FieldProblem[], total: number, what: (count: number) => string): { detail: string; errors: FieldProblem[] } {
  const shown = errors.slice(0, MAX_LISTED_PROBLEMS).map(({ pointer, detail }) => ({ pointer: cut(pointer), detail: cut(detail) }));
  const more = total > shown.length ? `; the first ${shown.length} are listed` : '';
  return { detail: `${what(total)}${more}`, errors: shown };
}

/** The request body, or part of it, breaks the contract (400). */
export class ValidationProblem extends HttpProblem {
  /** `total`: how many problems were found, when more than `errors` holds. */
  constructor(errors: readonly FieldProblem[], options?: ErrorOptions & { readonly total?: number }) {
    const total = Math.max(options?.total ?? 0, errors.length);
    super(400, 'validation', 'Request body is invalid', {
      ...options,
      ...listed(errors, total, (n) => `${n} problem${n === 1 ? '' : 's'} found`),
    });
    this.name = 'ValidationProblem';
  }
}

/** The body is not JSON at all (400). */
export class MalformedJsonProblem extends HttpProblem {
  constructor(detail: string, options?: ErrorOptions) {
    super(400, 'malformed-json', 'Request body is not valid JSON', { ...options, detail });
    this.name = 'MalformedJsonProblem';
  }
}

export const AUTH_REALM = 'email-send-api';

/** No Authorization header at all (401): the client is told which scheme to use. */
export class MissingCredentialsProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(401, 'unauthorized', 'Authentication required', {
      ...options,
      detail: 'Send the API key as "Authorization: Bearer <API_KEY>".',
      headers: { 'WWW-Authenticate': `Bearer realm="${AUTH_REALM}"` },
    });
    this.name = 'MissingCredentialsProblem';
  }
}

/** The credentials are not a valid, current API key (401). Never says which check failed. */
export class InvalidCredentialsProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(401, 'invalid-token', 'Invalid API key', {
      ...options,
      detail: 'The Authorization header does not carry a valid, current Bearer API key.',
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    });
    this.name = 'InvalidCredentialsProblem';
  }
}

/** The API key was valid but its expiry has passed (401): unlike other refusals, this one says why. */
export class ExpiredKeyProblem extends HttpProblem {
  constructor(expiredAt: string, options?: ErrorOptions) {
    super(401, 'invalid-token', 'Invalid API key', {
      ...options,
      detail: `The API key expired at ${expiredAt}; ask for a new one (key rotate, or Rotate Key on the settings page).`,
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token", error_description="The API key expired"' },
    });
    this.name = 'ExpiredKeyProblem';
  }
}

/** The key is valid but not for this call: it lacks the scope the endpoint needs (403, RFC 6750). */
export class InsufficientScopeProblem extends HttpProblem {
  constructor(scope: string, options?: ErrorOptions) {
    super(403, 'insufficient-scope', 'API key lacks the scope for this call', {
      ...options,
      detail: `This call needs an API key with the "${scope}" scope; nothing was done.`,
      headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
    });
    this.name = 'InsufficientScopeProblem';
  }
}

/** The caller may not act in that Organization; unknown and not-a-member look the same (403). */
export class OrganizationForbiddenProblem extends HttpProblem {
  /** `detail`: for a caller that is not an API key (the settings page's signed-in user). */
  constructor(options?: ErrorOptions & { readonly detail?: string }) {
    super(403, 'organization-forbidden', 'Not allowed in this Organization', {
      ...options,
      detail: options?.detail ?? 'The Organization does not exist or the API key\'s user is not a member of it.',
    });
    this.name = 'OrganizationForbiddenProblem';
  }
}

/**
 * The Organization is paused for its bounces or complaints, or because Amazon SES paused its
 * tenant (403, CONTRACT section 11 item 3): nothing is sent until the operator resumes it.
 */
export class OrganizationPausedProblem extends HttpProblem {
  constructor(pause: { readonly at: string; readonly reason: string }, options?: ErrorOptions) {
    super(403, 'organization-paused', 'Organization paused', {
      ...options,
      detail: `Sending is paused for this Organization since ${pause.at}: ${pause.reason}. Nothing was sent; the operator lifts the pause with "org resume".`,
    });
    this.name = 'OrganizationPausedProblem';
  }
}

/** One or more messages use a From address outside the Organization's sender identities (403). */
export class SenderForbiddenProblem extends HttpProblem {
  constructor(errors: readonly FieldProblem[], options?: ErrorOptions) {
    super(403, 'sender-forbidden', 'Sender not allowed for this Organization', {
      ...options,
      ...listed(errors, errors.length, (n) => `${n} message${n === 1 ? ' uses' : 's use'} a From address that is not an allowed sender identity; nothing was sent`),
    });
    this.name = 'SenderForbiddenProblem';
  }
}

/** The request body is larger than the configured limit (413). */
export class PayloadTooLargeProblem extends HttpProblem {
  constructor(limitBytes: number, options?: ErrorOptions) {
    super(413, 'payload-too-large', 'Request body too large', {
      ...options,
      detail: `The request body must be at most ${limitBytes} bytes.`,
    });
    this.name = 'PayloadTooLargeProblem';
  }
}

/**
 * The request is not JSON by its Content-Type, or comes in a content coding the service does not
 * read (415; `Accept-Encoding: identity` then says what it reads, RFC 9110 section 15.5.16).
 */
export class UnsupportedMediaTypeProblem extends HttpProblem {
  constructor(options?: ErrorOptions & { readonly contentEncoding?: string }) {
    const coding = options?.contentEncoding;
    super(415, 'unsupported-media-type', 'Unsupported media type', {
      ...options,
      ...(coding === undefined
        ? { detail: 'Send the body as "Content-Type: application/json".' }
        : { detail: `The body must not be compressed (Content-Encoding "${cut(coding)}"): send it as plain UTF-8 JSON.`, headers: { 'Accept-Encoding': 'identity' } }),
    });
    this.name = 'UnsupportedMediaTypeProblem';
  }
}

/** No route at that path (404). */
export class NotFoundProblem extends HttpProblem {
  /** `served`: what is there instead, e.g. `POST /v1.2/email/send`. */
  constructor(path: string, served: string, options?: ErrorOptions) {
    super(404, 'not-found', 'Not found', { ...options, detail: `Nothing is served at ${path}. Served nearby: ${served}.` });
    this.name = 'NotFoundProblem';
  }
}

/** No template of that name in the Organization, or not that version (404, CONTRACT section 14). */
export class TemplateNotFoundProblem extends HttpProblem {
  constructor(name: string, version?: number, options?: ErrorOptions) {
    super(404, 'template-not-found', 'Template not found', {
      ...options,
      detail: version === undefined ? `The Organization has no template named "${name}".` : `The template "${name}" has no version ${version}.`,
    });
    this.name = 'TemplateNotFoundProblem';
  }
}

/** The path exists but not for that method (405). */
export class MethodNotAllowedProblem extends HttpProblem {
  constructor(method: string, allow: readonly string[], options?: ErrorOptions & { readonly detail?: string }) {
    super(405, 'method-not-allowed', 'Method not allowed', {
      ...options,
      detail: options?.detail ?? `${method} is not allowed here; use ${allow.join(', ')}.`,
      headers: { Allow: allow.join(', ') },
    });
    this.name = 'MethodNotAllowedProblem';
  }
}

/** The data store cannot be reached or is throttling (503); nothing was sent. */
export class StorageUnavailableProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(503, 'storage-unavailable', 'Service temporarily unavailable', {
      ...options,
      detail: 'The service could not reach its data store. Nothing was sent; retry later.',
      headers: { 'Retry-After': '5' },
    });
    this.name = 'StorageUnavailableProblem';
  }
}

/** The Idempotency-Key header is not 1..255 printable ASCII characters (400). */
export class InvalidIdempotencyKeyProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(400, 'invalid-idempotency-key', 'Invalid Idempotency-Key header', {
      ...options,
      detail: 'Idempotency-Key must be 1 to 255 printable ASCII characters.',
    });
    this.name = 'InvalidIdempotencyKeyProblem';
  }
}

/** A request with the same Idempotency-Key is still being processed (409). */
export class IdempotencyInProgressProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(409, 'idempotency-in-progress', 'Request with this Idempotency-Key is in progress', {
      ...options,
      detail: 'The first request with this Idempotency-Key has not finished yet; retry after it has to get its response.',
      headers: { 'Retry-After': '1' },
    });
    this.name = 'IdempotencyInProgressProblem';
  }
}

/** The Idempotency-Key was used before with a different body (422). */
export class IdempotencyKeyReusedProblem extends HttpProblem {
  constructor(options?: ErrorOptions) {
    super(422, 'idempotency-key-reused', 'Idempotency-Key reused with a different body', {
      ...options,
      detail: 'This Idempotency-Key was used in the last 24 hours for a request with a different body. Use a new key for a new request.',
    });
    this.name = 'IdempotencyKeyReusedProblem';
  }
}
