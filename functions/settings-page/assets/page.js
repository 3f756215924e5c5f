// What every part of the settings page shares: the DOM helpers, the page's state, the settings
// API call (a refused sign-in leads back to "Sign in"), and the copy and action helpers. Everything
// the API says is put on the page as text (textContent, value), never as HTML.

export const $ = (id) => document.getElementById(id);
export const show = (id, visible = true) => { $(id).hidden = !visible; };

/**
 * What the page shows: the signed-in user's view from GET /v1.2/me; the plain key when one was
 * just issued or revealed (`plain`), whether it is on screen (`shown`), and whether it was just
 * issued while reveal is off (`once`: this is the only time it can be seen).
 */
export const state = { me: null, plain: null, shown: false, once: false, activityCursor: null };

/** The OpenID client (`manager`) and the page's config.json, set once by `signIn` (session.js). */
export const session = { manager: null, config: null };

/** Thrown once the page has already said what went wrong (or moved to another screen). */
export class Stop extends Error {}

export function say(message, isError = false) {
  const status = $('status');
  status.textContent = message;
  status.classList.toggle('error', isError);
}

export function screen(which) {
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
export async function api(method, path, query = {}, payload = undefined) {
  const user = await session.manager.getUser();
  if (!user || user.expired) {
    await session.manager.removeUser();
    screen('signed-out');
    throw new Stop();
  }
  const search = new URLSearchParams(Object.entries(query).filter(([, value]) => value));
  const response = await fetch(search.size > 0 ? `${path}?${search}` : path, {
    method,
    headers: { authorization: `Bearer ${user.access_token}`, accept: 'application/json', ...(payload !== undefined && { 'content-type': 'application/json' }) },
    ...(payload !== undefined && { body: JSON.stringify(payload) }),
    cache: 'no-store',
  });
  if (response.status === 204) return null;
  const body = await readJson(response);
  if (response.ok) return body;
  if (response.status === 401) {
    await session.manager.removeUser();
    screen('signed-out');
    say('Your sign-in has ended. Sign in again.');
    throw new Stop();
  }
  if (response.status === 403 && String(body.type).endsWith('/no-access')) {
    $('no-access-email').textContent = user.profile?.email ?? 'you signed in with';
    screen('no-access');
    throw new Stop();
  }
  // A problem's `errors` say what was wrong where (a preview's missing variable, say): all of it, as text.
  const errors = Array.isArray(body.errors) ? body.errors.map((error) => `${error.pointer || 'the body'}: ${error.detail}`) : [];
  const what = body.detail ?? body.title ?? `The request failed (HTTP ${response.status}).`;
  say(errors.length > 0 ? `${what}: ${errors.join('; ')}.` : what, true);
  throw new Stop();
}

export function copyButton(describedBy, text) {
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = 'Copy';
  button.setAttribute('aria-describedby', describedBy);
  button.addEventListener('click', () => copy(text, null));
  return button;
}

export const number = (value) => new Intl.NumberFormat().format(value);

export function cell(text) {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

/** Appends the test-mode mark to a cell when `test` is true: nothing of that message reaches Amazon SES. */
export function markTest(td, test) {
  if (!test) return td;
  const badge = document.createElement('span');
  badge.className = 'badge test';
  badge.textContent = 'Test';
  badge.title = 'Sent with a test key: nothing reached Amazon SES';
  td.append(' ', badge);
  return td;
}

export const when = (iso) => {
  const time = document.createElement('time');
  time.dateTime = iso;
  time.textContent = new Date(iso).toLocaleString();
  const td = document.createElement('td');
  td.append(time);
  return td;
};

export async function copy(text, field) {
  try {
    await navigator.clipboard.writeText(text);
    say('Copied to the clipboard.');
  } catch {
    // No clipboard access (an old browser, a denied permission): leave it selected to copy by hand.
    field?.select();
    say('Could not copy automatically: select the text and copy it by hand.', true);
  }
}

/**
 * Runs a key action with its button disabled; a Stop has already said what went wrong. Chromium
 * takes the focus off a button while it is disabled, so a keyboard user who pressed it is given it
 * back, unless the action put the focus somewhere of its own.
 */
export async function act(button, action) {
  const hadFocus = document.activeElement === button;
  button.disabled = true;
  say('');
  try {
    await action();
  } catch (error) {
    if (!(error instanceof Stop)) say(`Something went wrong: ${error.message}`, true);
  } finally {
    button.disabled = false;
    if (hadFocus && (document.activeElement === null || document.activeElement === document.body)) button.focus();
  }
}

/**
 * A list of rows, each of its `cells` and one button (`button`: its text, label, confirmation
 * and the action it runs once confirmed), put into the table `name` (its parts `${name}-rows`,
 * `${name}-table`, `${name}-none`). A row whose action succeeded leaves the list; focus goes to
 * the panel `panel` and `done` is said.
 */
export function fillActionTable(name, panel, items, rowOf) {
  const rows = items.map((item) => {
    const { cells, button: spec } = rowOf(item);
    const row = document.createElement('tr');
    const action = document.createElement('td');
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = spec.text;
    button.setAttribute('aria-label', spec.label);
    button.addEventListener('click', () => {
      if (!window.confirm(spec.confirm)) return;
      act(button, async () => {
        const done = await spec.run();
        row.remove();
        const any = $(`${name}-rows`).children.length > 0;
        show(`${name}-table`, any);
        show(`${name}-none`, !any);
        $(panel).focus();
        say(done);
      });
    });
    action.append(button);
    row.append(...cells, action);
    return row;
  });
  $(`${name}-rows`).replaceChildren(...rows);
  show(`${name}-table`, rows.length > 0);
  show(`${name}-none`, rows.length === 0);
}

export function forgetKey() {
  state.plain = null;
  state.shown = false;
  state.once = false;
}
