// Signing in and out with OpenID Connect (authorization code + PKCE, through oidc-client-ts), and
// the profile menu that signs out. Tokens are kept in sessionStorage, which ends with the tab; only
// the access token is ever sent (the ID token is not a bearer token, and the API refuses it).
import { $, forgetKey, say, session, state } from './page.js';

const { UserManager, WebStorageStateStore } = window.oidc;

/** Reads config.json, completes a sign-in or sign-out redirect, and answers whether a user is signed in. */
export async function signIn() {
  const config = await (await fetch('/settings/config.json', { cache: 'no-store' })).json();
  const here = `${location.origin}/settings`;
  const store = new WebStorageStateStore({ store: window.sessionStorage });
  const manager = new UserManager({
    authority: config.issuer,
    client_id: config.clientId,
    redirect_uri: here,
    post_logout_redirect_uri: here,
    response_type: 'code',
    scope: config.scope,
    loadUserInfo: false,
    userStore: store,
    stateStore: store,
    automaticSilentRenew: false,
    monitorSession: false,
  });
  session.config = config;
  session.manager = manager;

  const query = new URLSearchParams(location.search);
  if (query.has('code') || query.has('error') || query.has('state')) {
    try {
      if (query.has('code') || query.has('error')) await manager.signinRedirectCallback();
      else await manager.signoutRedirectCallback();
    } catch (error) {
      say(`Sign-in did not complete: ${error.message}`, true);
    }
    // The code and state have done their job; they do not belong in the address bar or history.
    history.replaceState(null, '', `/settings${location.hash}`);
  }

  const user = await manager.getUser();
  return Boolean(user && !user.expired);
}

/** The profile menu: a menu button with arrow-key, Home/End and Escape handling; `showSettings` opens the API Key panel. */
export function wireProfileMenu({ showSettings }) {
  const button = $('profile-button');
  const menu = $('profile-menu');
  const items = () => [...menu.querySelectorAll('[role="menuitem"]')];
  const open = (focusIndex) => {
    menu.hidden = false;
    button.setAttribute('aria-expanded', 'true');
    const all = items();
    all[(focusIndex + all.length) % all.length].focus();
  };
  const close = (refocus) => {
    menu.hidden = true;
    button.setAttribute('aria-expanded', 'false');
    if (refocus) button.focus();
  };
  button.addEventListener('click', () => (menu.hidden ? open(0) : close(false)));
  button.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown') { event.preventDefault(); open(0); }
    if (event.key === 'ArrowUp') { event.preventDefault(); open(-1); }
  });
  menu.addEventListener('keydown', (event) => {
    const all = items();
    const at = all.indexOf(document.activeElement);
    const moves = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1 };
    if (event.key in moves) {
      event.preventDefault();
      all[(moves[event.key] + all.length) % all.length].focus();
    } else if (event.key === 'Escape') {
      event.preventDefault();
      close(true);
    } else if (event.key === 'Tab') {
      close(false);
    }
  });
  document.addEventListener('click', (event) => {
    if (!menu.hidden && !event.target.closest('#profile')) close(false);
  });
  $('menu-settings').addEventListener('click', () => {
    close(false);
    if (location.hash !== '#api-key') location.hash = '#api-key';
    else showSettings();
  });
  $('menu-sign-out').addEventListener('click', () => { close(false); signOut(); });
}

export async function signOut() {
  // The user (and its ID token) is removed first, so no id_token_hint goes into the sign-out URL.
  await session.manager.removeUser();
  state.me = null;
  forgetKey();
  if (session.config.logoutUrl) {
    // Cognito's managed login ends its session at its own /logout, not at an end_session_endpoint.
    location.assign(session.config.logoutUrl);
    return;
  }
  // No id_token_hint: the ID token stays out of URLs (history, the provider's logs); the client id
  // names the page instead, and the provider asks to confirm the sign-out.
  await session.manager.signoutRedirect();
}
