// The Templates panel: the templates of the user's Organizations (GET /v1.2/me/templates), read
// only, each with a Preview button that renders its latest version with the Variables typed in
// (POST /v1.2/me/templates/{Name}/render). A missing variable or a rule the rendered message
// breaks is said as the API lists it. Everything is put on the page as text, the HTML body too.
import { $, act, api, cell, say, show, when } from './page.js';

/** `nameOf`: an Organization's name from its id. */
export async function loadTemplates(nameOf) {
  const { Templates: list } = await api('GET', '/v1.2/me/templates');
  const rows = list.map((template) => {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'Preview';
    button.setAttribute('aria-label', `Preview ${template.Name} of ${nameOf(template.OrganizationId)}`);
    button.addEventListener('click', () => act(button, () => preview(template)));
    const action = document.createElement('td');
    action.append(button);
    const row = document.createElement('tr');
    row.append(cell(nameOf(template.OrganizationId)), cell(template.Name), cell(String(template.LatestVersion)), when(template.UpdatedAt), action);
    return row;
  });
  $('templates-rows').replaceChildren(...rows);
  show('templates-table', rows.length > 0);
  show('templates-none', rows.length === 0);
  show('template-preview', false);
}

async function preview(template) {
  show('template-preview', false);
  let variables;
  try {
    variables = JSON.parse($('template-variables').value.trim() || '{}');
  } catch {
    say('The Variables are not JSON: write an object such as {"name": "Ada"}.', true);
    return;
  }
  const rendered = await api('POST', `/v1.2/me/templates/${encodeURIComponent(template.Name)}/render`, {}, { OrganizationId: template.OrganizationId, Variables: variables });
  $('preview-title').textContent = `Preview: ${rendered.Name}, version ${rendered.Version}`;
  $('preview-subject').textContent = rendered.Subject;
  $('preview-text').textContent = rendered.TextContent ?? '(no text body)';
  $('preview-html').textContent = rendered.HtmlContent ?? '(no HTML body)';
  show('template-preview', true);
  $('template-preview').scrollIntoView({ block: 'nearest' });
}

/** A changed Variables box hides the preview it no longer matches. */
export function wireTemplatePreview() {
  $('template-variables').addEventListener('input', () => show('template-preview', false));
}
