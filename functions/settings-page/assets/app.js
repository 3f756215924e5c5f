// The settings page: the signed-in user's API key, Organizations, Activity and suppression lists
// from /v1.2/me…, in one panel each behind a side menu. Signing in and out is session.js's; the
// helpers every part shares (the API call, state, copy, actions) are page.js's.
//
// The plain API key exists only in the answers to generate, rotate and the owner's reveal
// (GET /v1.2/me/api-key), in memory and in the one read-only field that shows it: never in
// storage, a URL or a log. Everything the API says is put on the page as text (textContent,
// value), never as HTML.
import { $, act, api, cell, copy, copyButton, fillActionTable, forgetKey, markTest, number, say, screen, session, show, state, Stop, when } from './page.js';
import { loadSchedules } from './schedules.js';
import { loadTemplates, wireTemplatePreview } from './templates.js';
import { signIn, signOut, wireProfileMenu } from './session.js';

function renderKey() {
  const key = state.me.ApiKey;
  show('key-none', key === null);
  show('key-current', key !== null);
  if (!key) return;
  $('key-masked').textContent = key.Masked;
  const created = $('key-created');
  created.dateTime = key.CreatedAt;
  created.textContent = new Date(key.CreatedAt).toLocaleString();
  // What the key may do (docs/keys.md): absent limits mean everything.
  $('key-scopes').textContent = `${key.Scopes ? key.Scopes.join(', ') : 'all'}${key.Test ? ' (test mode: nothing reaches Amazon SES)' : ''}`;
  $('key-senders').textContent = key.Senders ? key.Senders.join(', ') : "all of your Organizations' senders";
  $('key-expires').textContent = key.ExpiresAt ? new Date(key.ExpiresAt).toLocaleString() : 'never';
  $('key-last-used').textContent = key.LastUsedAt ? `${new Date(key.LastUsedAt).toLocaleString()} (to the hour)` : 'never';
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

function limitsText(limits) {
  const parts = [];
  if (limits.Rate !== null) parts.push(`${number(limits.Rate)} a second`);
  if (limits.Daily !== null) parts.push(`${number(limits.Daily)} a day`);
  if (limits.Weight !== 1) parts.push(`weight ${number(limits.Weight)}`);
  return parts.length > 0 ? parts.join(', ') : 'None set';
}

// What a message that does not give Tracking is tracked for: the Organization's default (docs/tracking.md).
function trackingText(tracking) {
  const tracked = [tracking.Opens && 'opens', tracking.Clicks && 'clicks'].filter(Boolean);
  return tracked.length > 0 ? tracked.join(', ') : 'Off';
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
    row.append(name, id, action, cell(limitsText(organization.Limits)), cell(sent), cell(trackingText(organization.Tracking ?? {})), reputationCell(organization.Reputation));
    return row;
  });
  $('organizations-rows').replaceChildren(...rows);
  const select = $('activity-organization');
  const chosen = select.value;
  select.replaceChildren(select.options[0], ...organizations.map((organization) => new Option(organization.Name, organization.OrganizationId)));
  select.value = organizations.some((organization) => organization.OrganizationId === chosen) ? chosen : '';
}

const organizationName = (id) => state.me.Organizations.find((organization) => organization.OrganizationId === id)?.Name ?? id;

function activityRow(message) {
  const row = document.createElement('tr');
  const status = document.createElement('td');
  const badge = document.createElement('span');
  badge.className = `badge ${message.Status}`;
  badge.textContent = message.Status;
  status.append(badge);
  markTest(status, message.Test);
  // Opens count people only (machine opens are left out); an untracked message shows 0 for both.
  row.append(when(message.SentAt), cell(message.Recipients.join(', ')), cell(message.Subject), status, cell(String(message.Opens ?? 0)), cell(String(message.Clicks ?? 0)), cell(message.OrganizationName || organizationName(message.OrganizationId)));
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
  // A filtered read stops after a few thousand messages: with older ones left, say so, not "none".
  $('activity-none').textContent = page.Cursor === null ? 'No messages match.' : 'No match among the most recent messages. Load more looks further back.';
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
  fillActionTable('suppressions', 'suppressions', list, (suppression) => {
    const name = organizationName(suppression.OrganizationId);
    return {
      cells: [cell(name), cell(suppression.Address), cell(suppression.Reason), when(suppression.At)],
      button: {
        text: 'Remove',
        label: `Remove ${suppression.Address}`,
        confirm: `Remove ${suppression.Address} from the suppression list of ${name}?\n\nMessages to it will be sent again. If it still bounces or complains, it comes back.`,
        run: async () => {
          await api('DELETE', '/v1.2/me/suppressions', { organizationId: suppression.OrganizationId, address: suppression.Address });
          return `${suppression.Address} was removed from the suppression list of ${name}.`;
        },
      },
    };
  });
}

function render() {
  $('profile-email').textContent = state.me.Email;
  renderKey();
  renderOrganizations();
  selectPanel(false);
  screen('settings');
}

const PANELS = ['api-key', 'organizations', 'activity', 'suppressions', 'templates'];

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
  const load = { organizations: refreshOrganizations, activity: () => Promise.all([loadSchedules(organizationName), loadActivity(false)]), suppressions: loadSuppressions, templates: () => loadTemplates(organizationName) }[panel];
  load?.().catch((error) => {
    if (!(error instanceof Stop)) say(`Something went wrong: ${error.message}`, true);
  });
}

/** The body of generate and rotate: the options chosen for the new key (docs/keys.md). */
function keyRequest() {
  const boxes = [...document.querySelectorAll('#key-options input[name="scope"]')];
  const scopes = boxes.filter((box) => box.checked).map((box) => box.value);
  if (scopes.length === 0) {
    say('Choose at least one scope for the new key.', true);
    throw new Stop();
  }
  const expiresIn = $('key-expiry').value;
  return {
    ...(scopes.length < boxes.length && { Scopes: scopes }),
    ...(expiresIn && { ExpiresIn: expiresIn }),
    ...($('key-test').checked && { Test: true }),
  };
}

async function issued(view, what) {
  const reveal = session.config.keyReveal !== false;
  state.plain = view.Key;
  state.shown = true;
  state.once = !reveal;
  // The new key's limits as the API stored them.
  const { ApiKey } = await api('GET', '/v1.2/me');
  state.me = { ...state.me, ApiKey: { ...ApiKey, Masked: view.Masked, CreatedAt: view.CreatedAt, Revealable: reveal } };
  renderKey();
  $('new-key').focus();
  $('new-key').select();
  say(reveal ? `${what} You can show and copy it here again later.` : `${what} It is shown once: copy it now.`);
}

function wireKeyActions() {
  $('generate').addEventListener('click', (event) =>
    act(event.currentTarget, async () => issued(await api('POST', '/v1.2/me/api-key', {}, keyRequest()), 'Your new API key is ready.')),
  );
  $('rotate').addEventListener('click', (event) => {
    // A scheduled message belongs to the key that made it: unless kept, the old key's are cancelled.
    const keep = $('keep-schedules').checked;
    const schedules = keep ? 'Its scheduled messages are kept, on the new key.' : 'Its scheduled messages are cancelled (tick "Keep my scheduled messages" to keep them).';
    const sure = window.confirm(`Rotate your API key?\n\nA new key replaces it; the current key stops working within a minute, wherever it is used. ${schedules}`);
    if (!sure) return;
    forgetKey();
    act(event.currentTarget, async () => issued(await api('POST', '/v1.2/me/api-key/rotate', {}, { ...keyRequest(), ...(keep && { KeepSchedules: true }) }), 'Your key was rotated.'));
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
    const sure = window.confirm('Revoke your API key?\n\nIt stops working within a minute, wherever it is used, and the messages it scheduled are cancelled. You can generate a new one afterwards.');
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

async function main() {
  wireKeyActions();
  wireLists();
  wireTemplatePreview();
  wireProfileMenu({ showSettings: () => selectPanel(true) });
  $('sign-in').addEventListener('click', () => session.manager.signinRedirect());
  $('no-access-sign-out').addEventListener('click', () => signOut());
  window.addEventListener('hashchange', () => { if (state.me) selectPanel(true); });
  if (!(await signIn())) {
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