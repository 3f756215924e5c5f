/**
 * The operator's view of an Organization's templates (CONTRACT section 14 item 5):
 * `template put --org O --name N --subject S [--text-file F] [--html-file F]`, `template list`,
 * `template show [--version V]` and `template delete`. The same checks and the same store as the
 * templates endpoints: a template the API would refuse (it does not compile, or steps outside the
 * safe subset, or is too large) is refused here too, with each problem named, and nothing stored.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { ProblemList } from '../../functions/shared/http/body-rules';
import { ValidationProblem } from '../../functions/shared/http/problems';
import { InvalidArgumentError, RecordConflictError, RecordNotFoundError } from '../../functions/shared/store/records';
import { readVersion } from '../../functions/shared/templates/template-input';
import { loadEngine } from '../../functions/shared/templates/rendering';
import { DynamoDbTemplateStore, TemplateLimitError } from '../../functions/shared/templates/template-store';
import { validatePut, validateQuery } from '../../functions/templates/validation';
import type { DynamoDbAdminStore } from './admin-store';
import type { Leaf } from './command-frame';

const templatesOf = (store: DynamoDbAdminStore) => new DynamoDbTemplateStore(store.client, store.tableName);

/** The API's validation problems as one operator-facing error: each field and what is wrong with it. */
function invalid(problems: { readonly errors?: readonly { pointer: string; detail: string }[] | undefined }): InvalidArgumentError {
  const lines = (problems.errors ?? []).map(({ pointer, detail }) => `${pointer.replace(/^\//, '') || 'template'}: ${detail}`);
  return new InvalidArgumentError(lines.join('; '));
}

async function checked<T>(check: () => T): Promise<T> {
  try {
    return check();
  } catch (error) {
    if (error instanceof ValidationProblem) throw invalid(error);
    throw error;
  }
}

async function textOf(file: string | undefined, what: string): Promise<string | undefined> {
  if (file === undefined) return undefined;
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(`cannot read the ${what} file "${file}": ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
}

export function addTemplateCommands(program: Command, leaf: Leaf): void {
  const template = program.command('template').description("an Organization's message templates (Handlebars, versioned)");

  leaf(template, 'put', 'save a template as its next version (1 for a new name); checked as the API checks it', async (store, o) => {
    const body = { OrganizationId: o.org, Subject: o.subject, TextContent: await textOf(o.textFile, 'text'), HtmlContent: await textOf(o.htmlFile, 'HTML') };
    const request = await checked(() => validatePut(o.name, body));
    const problems = new ProblemList();
    for (const problem of (await loadEngine()).checkTemplate(request.content)) {
      problems.add(`/${problem.field}`, problem.line === undefined ? problem.detail : `line ${problem.line}: ${problem.detail}`);
    }
    if (problems.count > 0) throw invalid({ errors: problems.items });
    await store.getOrganization(request.organizationId);
    try {
      const saved = await templatesOf(store).save(request.organizationId, request.name, request.content, new Date());
      return { human: `Saved template ${saved.Name} version ${saved.Version} in Organization ${request.organizationId}`, json: { name: saved.Name, version: saved.Version, createdAt: saved.CreatedAt } };
    } catch (error) {
      if (error instanceof TemplateLimitError) throw new RecordConflictError(error.message, { cause: error });
      throw error;
    }
  })
    .requiredOption('--org <uuid>', 'Organization id')
    .requiredOption('--name <name>', 'template name: 1 to 64 of A-Z, a-z, 0-9, _ and -')
    .requiredOption('--subject <text>', 'the subject template')
    .option('--text-file <path>', 'file holding the text body template')
    .option('--html-file <path>', 'file holding the HTML body template');

  leaf(template, 'list', "list an Organization's templates with their latest version", async (store, o) => {
    // An Organization that does not exist is exit 3, as everywhere in the CLI, not an empty list.
    const organizationId = (await store.getOrganization(o.org!)).id;
    const templates = await templatesOf(store).list(organizationId);
    const lines = templates.map((t) => `\n  ${t.Name}  version ${t.LatestVersion}  updated ${t.UpdatedAt}`).join('');
    return {
      human: `Organization ${organizationId} has ${templates.length} template${templates.length === 1 ? '' : 's'}${lines}`,
      json: { organizationId, templates: templates.map((t) => ({ name: t.Name, latestVersion: t.LatestVersion, updatedAt: t.UpdatedAt })) },
    };
  }).requiredOption('--org <uuid>', 'Organization id');

  leaf(template, 'show', 'print a template version (the latest unless --version)', async (store, o) => {
    const { organizationId, name } = await checked(() => validateQuery({ organizationId: o.org }, o.name, true));
    const problems = new ProblemList();
    const version = readVersion(o.version, '/version', problems, true);
    if (problems.count > 0) throw invalid({ errors: problems.items });
    await store.getOrganization(organizationId);
    const found = await templatesOf(store).read(organizationId, name, version);
    if (!found) throw new RecordNotFoundError(version === undefined ? `Organization ${organizationId} has no template named "${name}"` : `template "${name}" has no version ${version}`);
    const body = [`Subject: ${found.Subject}`, ...(found.TextContent === undefined ? [] : ['--- text ---', found.TextContent]), ...(found.HtmlContent === undefined ? [] : ['--- html ---', found.HtmlContent])];
    return {
      human: `Template ${found.Name} version ${found.Version} (created ${found.CreatedAt})\n${body.join('\n')}`,
      json: { name: found.Name, version: found.Version, createdAt: found.CreatedAt, subject: found.Subject, textContent: found.TextContent ?? null, htmlContent: found.HtmlContent ?? null },
    };
  })
    .requiredOption('--org <uuid>', 'Organization id')
    .requiredOption('--name <name>', 'template name')
    .option('--version <n>', 'a version number');

  leaf(template, 'delete', 'delete a template and all its versions (messages already scheduled with it still go out)', async (store, o) => {
    const { organizationId, name } = await checked(() => validateQuery({ organizationId: o.org }, o.name, true));
    await store.getOrganization(organizationId);
    if (!(await templatesOf(store).remove(organizationId, name))) throw new RecordNotFoundError(`Organization ${organizationId} has no template named "${name}"`);
    return { human: `Deleted template ${name} of Organization ${organizationId}`, json: { name, deleted: true } };
  })
    .requiredOption('--org <uuid>', 'Organization id')
    .requiredOption('--name <name>', 'template name');
}
