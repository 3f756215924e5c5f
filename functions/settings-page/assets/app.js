// The settings page: sign-in with OpenID Connect (authorization code + PKCE, through
// oidc-client-ts), then the signed-in user's API key, Organizations, Activity and suppression
// lists from /v1.2/me….
//
// The plain API key exists only in the answers to generate, rotate and the owner's reveal
// (GET /v1.2/me/api-key), in memory and in the one read-only field that shows it: never in
// storage, a URL or a log. Tokens are kept in sessionStorage, which ends with the tab; only the
// access token is ever sent (the ID token is not a bearer token, and the API refuses it).
// Everything the API says is put on the page as text (textContent, value), never as HTML.

const { UserManager, WebStorageStateStore } = window.oidc;

const $ = (id) => document.getElementById(id);
const show = (id, visible = true) => { $(id).hidden = !visible; };

/**
 * What the page shows: the signed-in user's view from GET /v1.2/me; the plain key when one was
 * just issued or revealed (`plain`), whether it is on screen (`shown`), and whether it was just
 * issued while reveal is off (`once`: this is the only time it can be seen).
 */
const state = { me: null, plain: null, shown: false, once: false, activityCursor: null };
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
async function api(method, path, query = {}) {
  const user = await manager.getUser();
  if (!user || user.expired) {
    await manager.removeUser();
    screen('signed-out');
    throw new Stop();
  }
  const search = new URLSearchParams(Object.entries(query).filter(([, value]) => value));
  const response = await fetch(search.size > 0 ? `${path}?${search}` : path, {
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
  show('key-none', key === null);
  show('key-current', key !== null);
  if (!key) return;
  $('key-masked').textContent = key.Masked;
  const created = $('key-created');
  created.dateTime = key.CreatedAt;
  created.textContent = new Date(key.CreatedAt).toLocaleString();
  const usable = key.Revealable || state.plain !== null;
  show('show-key', key.Revealable);
  show('copy-key', usable);
  show('key-not-revealable', !usable);
  $('show-key').setAttribute('aria-pressed', String(state.shown));
  show('key-field', state.shown && state.plain !== null);
  $('new-key').value = state.shown && state.plain !== null ? state.plain : '';
  show('key-once-warning', state.once);
  show('key-kept-note', !state.once && key.Revealable);
}

/** The plain key: in memory already, or unsealed for its owner by GET /v1.2/me/api-key. */
async function plainKey() {
  if (state.plain === null) state.plain = (await api('GET', '/v1.2/me/api-key')).Key;
  return state.plain;
}

function copyButton(describedBy, text) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = 'Copy';
  button.setAttribute('aria-describedby', describedBy);
  button.addEventListener('click', () => copy(text, null));
  return button;
}

const number = (value) => new Intl.NumberFormat().format(value);

function limitsText(limits) {
  const parts = [];
  if (limits.Rate !== null) parts.push(`${number(limits.Rate)} a second`);
  if (limits.Daily !== null) parts.push(`${number(limits.Daily)} a day`);
  if (limits.Weight !== 1) parts.push(`weight ${number(limits.Weight)}`);
  return parts.length > 0 ? parts.join(', ') : 'None set';
}

function cell(text) {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
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
    const daily = organization.Limits.Daily;
    const sent = daily === null ? number(organization.SentToday) : `${number(organization.SentToday)} of ${number(daily)}`;
    row.append(name, id, action, cell(limitsText(organization.Limits)), cell(sent), reputationCell(organization.Reputation));
    return row;
  });
  $('organizations-rows').replaceChildren(...rows);
  const select = $('activity-organization');
  const chosen = select.value;
  select.replaceChildren(select.options[0], ...organizations.map((organization) => new Option(organization.Name, organization.OrganizationId)));
  select.value = organizations.some((organization) => organization.OrganizationId === chosen) ? chosen : '';
}

const organizationName = (id) => state.me.Organizations.find((organization) => organization.OrganizationId === id)?.Name ?? id;
const when = (iso) => {
  const time = document.createElement('time');
  time.dateTime = iso;
  time.textContent = new Date(iso).toLocaleString();
  const td = document.createElement('td');
  td.append(time);
  return td;
};

function activityRow(message) {
  const row = document.createElement('tr');
  const status = document.createElement('td');
  const badge = document.createElement('span');
  badge.className = `badge ${message.Status}`;
  badge.textContent = message.Status;
  status.append(badge);
  row.append(when(message.SentAt), cell(message.Recipients.join(', ')), cell(message.Subject), status, cell(message.OrganizationName || organizationName(message.OrganizationId)));
  return row;
}

/** The first page for the filters as they are (`more` false), or the next page after the last one. */
async function loadActivity(more) {
  const page = await api('GET', '/v1.2/me/messages', {
    organizationId: $('activity-organization').value,
    status: $('activity-status').value,
    recipient: $('activity-recipient').value.trim(),
    cursor: more ? state.activityCursor : '',
  });
  const rows = page.Messages.map(activityRow);
  if (more) $('activity-rows').append(...rows);
  else $('activity-rows').replaceChildren(...rows);
  state.activityCursor = page.Cursor;
  const any = $('activity-rows').children.length > 0;
  show('activity-table', any);
  show('activity-none', !any);
  // The last page hides Load more: keep keyboard focus in the panel rather than losing it.
  const focusWasOnMore = document.activeElement === $('activity-more');
  show('activity-more', page.Cursor !== null);
  if (focusWasOnMore && page.Cursor === null) $('activity').focus();
}

/** Today's use moves as mail is sent: the Organizations are read again each time they are shown. */
async function refreshOrganizations() {
  const me = await api('GET', '/v1.2/me');
  state.me = { ...state.me, Organizations: me.Organizations };
  renderOrganizations();
}

async function loadSuppressions() {
  const { Suppressions: list } = await api('GET', '/v1.2/me/suppressions');
  const rows = list.map((suppression) => {
    const row = document.createElement('tr');
    const action = document.createElement('td');
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.textContent = 'Remove';
    remove.setAttribute('aria-label', `Remove ${suppression.Address}`);
    remove.addEventListener('click', () => {
      const name = organizationName(suppression.OrganizationId);
      const sure = window.confirm(`Remove ${suppression.Address} from the suppression list of ${name}?\n\nMessages to it will be sent again. If it still bounces or complains, it comes back.`);
      if (!sure) return;
      act(remove, async () => {
        await api('DELETE', '/v1.2/me/suppressions', { organizationId: suppression.OrganizationId, address: suppression.Address });
        row.remove();
        const any = $('suppressions-rows').children.length > 0;
        show('suppressions-table', any);
        show('suppressions-none', !any);
        $('suppressions').focus();
        say(`${suppression.Address} was removed from the suppression list of ${name}.`);
      });
    });
    action.append(remove);
    row.append(cell(organizationName(suppression.OrganizationId)), cell(suppression.Address), cell(suppression.Reason), when(suppression.At), action);
    return row;
  });
  $('suppressions-rows').replaceChildren(...rows);
  show('suppressions-table', rows.length > 0);
  show('suppressions-none', rows.length === 0);
}

function render() {
  $('profile-email').textContent = state.me.Email;
  renderKey();
  renderOrganizations();
  selectPanel(false);
  screen('settings');
}

const PANELS = ['api-key', 'organizations', 'activity', 'suppressions'];

/** Shows the side menu's panel named by the URL fragment (API Key unless it says otherwise), loading what it lists. */
function selectPanel(moveFocus) {
  const named = location.hash.slice(1);
  const panel = PANELS.includes(named) ? named : 'api-key';
  for (const name of PANELS) {
    show(name, name === panel);
    if (name === panel) $(`nav-${name}`).setAttribute('aria-current', 'page');
    else $(`nav-${name}`).removeAttribute('aria-current');
  }
  if (moveFocus) {
    say('');
    $(panel).focus();
  }
  const load = { organizations: refreshOrganizations, activity: () => loadActivity(false), suppressions: loadSuppressions }[panel];
  load?.().catch((error) => {
    if (!(error instanceof Stop)) say(`Something went wrong: ${error.message}`, true);
  });
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

function issued(view, what) {
  const reveal = config.keyReveal !== false;
  state.plain = view.Key;
  state.shown = true;
  state.once = !reveal;
  state.me = { ...state.me, ApiKey: { Masked: view.Masked, CreatedAt: view.CreatedAt, Revealable: reveal } };
  renderKey();
  $('new-key').focus();
  $('new-key').select();
  say(reveal ? `${what} You can show and copy it here again later.` : `${what} It is shown once: copy it now.`);
}

function forgetKey() {
  state.plain = null;
  state.shown = false;
  state.once = false;
}

function wireKeyActions() {
  $('generate').addEventListener('click', (event) =>
    act(event.currentTarget, async () => issued(await api('POST', '/v1.2/me/api-key'), 'Your new API key is ready.')),
  );
  $('rotate').addEventListener('click', (event) => {
    const sure = window.confirm('Rotate your API key?\n\nA new key replaces it; the current key stops working within a minute, wherever it is used.');
    if (!sure) return;
    forgetKey();
    act(event.currentTarget, async () => issued(await api('POST', '/v1.2/me/api-key/rotate'), 'Your key was rotated.'));
  });
  $('show-key').addEventListener('click', (event) =>
    act(event.currentTarget, async () => {
      if (state.shown) {
        state.shown = false;
        state.once = false;
      } else {
        await plainKey();
        state.shown = true;
      }
      renderKey();
    }),
  );
  // Copies the full key whether it is on screen or not.
  $('copy-key').addEventListener('click', (event) => act(event.currentTarget, async () => copy(await plainKey(), state.shown ? $('new-key') : null)));
  $('revoke').addEventListener('click', (event) => {
    const sure = window.confirm('Revoke your API key?\n\nIt stops working within a minute, wherever it is used. You can generate a new one afterwards.');
    if (!sure) return;
    act(event.currentTarget, async () => {
      await api('DELETE', '/v1.2/me/api-key');
      forgetKey();
      state.me = { ...state.me, ApiKey: null };
      renderKey();
      $('generate').focus();
      say('Your API key was revoked.');
    });
  });
}

function wireLists() {
  $('activity-filters').addEventListener('submit', (event) => {
    event.preventDefault();
    act($('activity-search'), () => loadActivity(false));
  });
  $('activity-more').addEventListener('click', (event) => act(event.currentTarget, () => loadActivity(true)));
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
  // The user (and its ID token) is removed first, so no id_token_hint goes into the sign-out URL.
  await manager.removeUser();
  state.me = null;
  forgetKey();
  if (config.logoutUrl) {
    // Cognito's managed login ends its session at its own /logout, not at an end_session_endpoint.
    location.assign(config.logoutUrl);
    return;
  }
  // No id_token_hint: the ID token stays out of URLs (history, the provider's logs); the client id
  // names the page instead, and the provider asks to confirm the sign-out.
  await manager.signoutRedirect();
}

async function main() {
  wireKeyActions();
  wireLists();
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
