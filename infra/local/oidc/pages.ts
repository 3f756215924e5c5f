/**
 * The local OpenID provider's own pages: the sign-in form (one field, Email, and a Sign in
 * button), the sign-out confirmation and the error page. Plain HTML with no script and nothing
 * fetched from elsewhere (oidc-provider's defaults load web fonts, which fail offline).
 */

import { escapeHtml, htmlDocument } from '../../../functions/shared/http/html';

/**
 * Served with every page: nothing but the page's own inline style, and no framing. A form may
 * post here and be redirected on to the client's origins only (browsers apply `form-action` to the
 * redirects after a submission too, and a sign-in ends with one back to the settings page).
 */
export function pagePolicy(clientOrigins: readonly string[]): string {
  return `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${clientOrigins.join(' ')}; frame-ancestors 'none'; base-uri 'none'`;
}

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; background: #f4f5f7; color: #1d2433; margin: 0; }
  main { max-width: 22rem; margin: 4rem auto; background: #fff; padding: 2rem; border-radius: 8px; box-shadow: 0 1px 3px rgb(0 0 0 / 0.15); }
  h1 { font-size: 1.3rem; margin: 0 0 0.25rem; }
  p { color: #4a5365; margin: 0 0 1.25rem; font-size: 0.95rem; }
  label { display: block; font-weight: 600; margin-bottom: 0.25rem; }
  input { width: 100%; box-sizing: border-box; font: inherit; padding: 0.5rem; border: 1px solid #8a93a6; border-radius: 4px; }
  button { margin-top: 1rem; width: 100%; font: inherit; font-weight: 600; padding: 0.55rem; border: 0; border-radius: 4px; background: #1f5fd1; color: #fff; cursor: pointer; }
  button.secondary { background: #e6e9ef; color: #1d2433; }
  :focus-visible { outline: 3px solid #f5a623; outline-offset: 2px; }
  .error { color: #b3261e; font-weight: 600; }
`;

function page(title: string, body: string): string {
  return htmlDocument(title, `<style>${STYLE}</style>`, `<main>${body}</main>`);
}

export function signInPage(options: { action: string; clientName: string; email?: string; error?: string }): string {
  const error = options.error ? `<p class="error" role="alert" id="email-error">${escapeHtml(options.error)}</p>` : '';
  return page(
    'Sign in',
    `<h1>Sign in</h1>
<p>Local OpenID provider for ${escapeHtml(options.clientName)}. No password here: any e-mail address signs in.</p>
${error}
<form method="post" action="${escapeHtml(options.action)}" novalidate>
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="email" required autofocus value="${escapeHtml(options.email ?? '')}"${options.error ? ' aria-invalid="true" aria-describedby="email-error"' : ''}>
  <button type="submit">Sign in</button>
</form>`,
  );
}

/** `form` is oidc-provider's own hidden form (with its CSRF token), submitted by the buttons. */
export function signOutPage(form: string): string {
  return page(
    'Sign out',
    `<h1>Sign out</h1>
<p>Sign out of the local OpenID provider?</p>
${form}
<button type="submit" form="op.logoutForm" value="yes" name="logout" autofocus>Sign out</button>
<button type="submit" form="op.logoutForm" class="secondary">Stay signed in</button>`,
  );
}

export function signedOutPage(): string {
  return page('Signed out', '<h1>Signed out</h1><p>You are signed out of the local OpenID provider.</p>');
}

export function errorPage(out: Readonly<Record<string, unknown>>): string {
  const rows = Object.entries(out)
    .map(([name, value]) => `<p><strong>${escapeHtml(name)}</strong>: ${escapeHtml(String(value))}</p>`)
    .join('\n');
  return page('Sign-in error', `<h1>Sign-in error</h1>\n${rows}`);
}
