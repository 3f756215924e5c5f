// The settings page: sign-in with OpenID Connect (authorization code + PKCE, through
// oidc-client-ts), then the signed-in user's API key and Organizations from /v1.2/me.
//
// The plain API key exists only in the answer to generate/rotate, in memory and in the one
// read-only field that shows it: never in storage, a URL or a log. Tokens are kept in
// sessionStorage, which ends with the tab.

const { UserManager, WebStorageStateStore } = window.oidc;

const $ = (id) => document.getElementById(id);
const show = (id, visible = true) => { $(id).hidden = !visible; };

/** What the page shows: the signed-in user's view from GET /v1.2/me, and a key just issued. */
const state = { me: null, newKey: null };
let manager;
let config;

class Stop extends Error {}

function say(message, isError = false) {
  const status = $('status');
  status.textContent = message;
  status.classList.toggle('error', isError);
}

function screen(which) {
  for (const id of ['loading', 'signed-out', 'no-access', 'settings']) show(id, id === which);
  show('profile', which === 'settings');
}

async function readJson(response) {
  try {
    return await response.json();
  } catch {
    return {};
  }
}

/** Calls the settings API with the access token; a refused sign-in leads back to "Sign in". */
async function api(method, path) {
  const user = await manager.getUser();
  if (!user || user.expired) {
    await manager.removeUser();
    screen('signed-out');
    throw new Stop();
  }
  const response = await fetch(path, {
    method,
    headers: { authorization: `Bearer ${user.access_token}`, accept: 'application/json' },
    cache: 'no-store',
  });
  if (response.status === 204) return null;
  const body = await readJson(response);
  if (response.ok) return body;
  if (response.status === 401) {
    await manager.removeUser();
    screen('signed-out');
    say('Your sign-in has ended. Sign in again.');
    throw new Stop();
  }
  if (response.status === 403 && String(body.type).endsWith('/no-access')) {
    $('no-access-email').textContent = user.profile?.email ?? 'you signed in with';
    screen('no-access');
    throw new Stop();
  }
  say(body.detail ?? body.title ?? `The request failed (HTTP ${response.status}).`, true);
  throw new Stop();
}

function renderKey() {
  const key = state.me.ApiKey;
  show('key-new', state.newKey !== null);
  $('new-key').value = state.newKey ?? '';
  show('key-none', key === null);
  show('key-current', key !== null);
  if (key) {
    $('key-masked').textContent = key.Masked;
    const created = $('key-created');
    created.dateTime = key.CreatedAt;
    created.textContent = new Date(key.CreatedAt).toLocaleString();
  }
}

function copyButton(describedBy, text) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = 'Copy';
  button.setAttribute('aria-describedby', describedBy);
  button.addEventListener('click', () => copy(text, null));
  return button;
}

const percent = (rate) => `${Number((rate * 100).toFixed(2))} %`;

// The Organization's bounce and complaint rates, and its pause (CONTRACT section 11 item 3), as text.
function reputationCell(reputation) {
  const cell = document.createElement('td');
  if (!reputation) return cell;
  const rates = document.createElement('span');
  rates.textContent = `${reputation.Sends} sent, bounces ${percent(reputation.BounceRate)}, complaints ${percent(reputation.ComplaintRate)}`;
  cell.append(rates);
  if (reputation.Paused) {
    const paused = document.createElement('p');
    paused.className = 'warning';
    paused.textContent = `Paused since ${reputation.PausedAt}: ${reputation.PausedReason}`;
    cell.append(paused);
  }
  return cell;
}

function renderOrganizations() {
  const organizations = state.me.Organizations;
  show('organizations-none', organizations.length === 0);
  show('organizations-table', organizations.length > 0);
  const rows = organizations.map((organization, i) => {
    const row = document.createElement('tr');
    const name = document.createElement('td');
    name.textContent = organization.Name;
    const id = document.createElement('td');
    const code = document.createElement('code');
    code.id = `organization-id-${i}`;
    code.textContent = organization.OrganizationId;
    id.append(code);
    const action = document.createElement('td');
    action.append(copyButton(code.id, organization.OrganizationId));
    row.append(name, id, action, reputationCell(organization.Reputation));
    return row;
  });
  $('organizations-rows').replaceChildren(...rows);
}

function render() {
  $('profile-email').textContent = state.me.Email;
  renderKey();
  renderOrganizations();
  selectPanel(false);
  screen('settings');
}

/** Shows the side menu's panel named by the URL fragment (API Key unless it says otherwise). */
function selectPanel(moveFocus) {
  const panel = location.hash === '#organizations' ? 'organizations' : 'api-key';
  show('api-key', panel === 'api-key');
  show('organizations', panel === 'organizations');
  for (const [link, name] of [['nav-api-key', 'api-key'], ['nav-organizations', 'organizations']]) {
    if (name === panel) $(link).setAttribute('aria-current', 'page');
    else $(link).removeAttribute('aria-current');
  }
  if (moveFocus) {
    say('');
    $(panel).focus();
  }
}

async function copy(text, field) {
  try {
    await navigator.clipboard.writeText(text);
    say('Copied to the clipboard.');
  } catch {
    // No clipboard access (an old browser, a denied permission): leave it selected to copy by hand.
    field?.select();
    say('Could not copy automatically: select the text and copy it by hand.', true);
  }
}

/** Runs a key action with its button disabled; a Stop has already said what went wrong. */
async function act(button, action) {
  button.disabled = true;
  say('');
  try {
    await action();
  } catch (error) {
    if (!(error instanceof Stop)) say(`Something went wrong: ${error.message}`, true);
  } finally {
    button.disabled = false;
  }
}

function issued(view, message) {
  state.newKey = view.Key;
  state.me = { ...state.me, ApiKey: { Masked: view.Masked, CreatedAt: view.CreatedAt } };
  renderKey();
  $('new-key').focus();
  $('new-key').select();
  say(message);
}

function wireKeyActions() {
  $('generate').addEventListener('click', (event) =>
    act(event.currentTarget, async () => issued(await api('POST', '/v1.2/me/api-key'), 'Your new API key is shown once. Copy it now.')),
  );
  $('rotate').addEventListener('click', (event) => {
    const sure = window.confirm('Rotate your API key?\n\nA new key replaces it; the current key stops working within a minute, wherever it is used.');
    if (!sure) return;
    act(event.currentTarget, async () => issued(await api('POST', '/v1.2/me/api-key/rotate'), 'Your key was rotated. The new key is shown once. Copy it now.'));
  });
  $('revoke').addEventListener('click', (event) => {
    const sure = window.confirm('Revoke your API key?\n\nIt stops working within a minute, wherever it is used. You can generate a new one afterwards.');
    if (!sure) return;
    act(event.currentTarget, async () => {
      await api('DELETE', '/v1.2/me/api-key');
      state.newKey = null;
      state.me = { ...state.me, ApiKey: null };
      renderKey();
      $('generate').focus();
      say('Your API key was revoked.');
    });
  });
  $('copy-key').addEventListener('click', () => copy($('new-key').value, $('new-key')));
}

function wireProfileMenu() {
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
    else selectPanel(true);
  });
  $('menu-sign-out').addEventListener('click', () => { close(false); signOut(); });
}

async function signOut() {
  const user = await manager.getUser();
  await manager.removeUser();
  state.me = null;
  state.newKey = null;
  if (config.logoutUrl) {
    // Cognito's managed login ends its session at its own /logout, not at an end_session_endpoint.
    location.assign(config.logoutUrl);
    return;
  }
  await manager.signoutRedirect({ id_token_hint: user?.id_token });
}

async function main() {
  wireKeyActions();
  wireProfileMenu();
  $('sign-in').addEventListener('click', () => manager.signinRedirect());
  $('no-access-sign-out').addEventListener('click', () => signOut());
  window.addEventListener('hashchange', () => { if (state.me) selectPanel(true); });

  config = await (await fetch('/settings/config.json', { cache: 'no-store' })).json();
  const here = `${location.origin}/settings`;
  const session = new WebStorageStateStore({ store: window.sessionStorage });
  manager = new UserManager({
    authority: config.issuer,
    client_id: config.clientId,
    redirect_uri: here,
    post_logout_redirect_uri: here,
    response_type: 'code',
    scope: config.scope,
    loadUserInfo: false,
    userStore: session,
    stateStore: session,
    automaticSilentRenew: false,
    monitorSession: false,
  });

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
  if (!user || user.expired) {
    screen('signed-out');
    return;
  }
  state.me = await api('GET', '/v1.2/me');
  render();
}

main().catch((error) => {
  if (error instanceof Stop) return;
  screen('signed-out');
  say(`The settings page could not start: ${error.message}`, true);
});
