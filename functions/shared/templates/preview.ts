/**
 * A stored template version rendered with the Variables given, as the render endpoint
 * (`POST /v1.2/templates/{Name}/render`, API key) and the settings page's preview
 * (`POST /v1.2/me/templates/{Name}/render`, signed in) both answer it: 404 when the template or
 * that version does not exist, 400 listing every problem (a missing variable at its pointer under
 * `/Variables`, a rule the rendered message breaks), else the rendered fields.
 */
import { TemplateNotFoundProblem, ValidationProblem } from '../http/problems';
import { renderVersion } from './rendering';
import type { TemplateReader } from './template-store';

export interface TemplatePreview {
  readonly Name: string;
  readonly Version: number;
  readonly Subject: string;
  readonly TextContent: string | null;
  readonly HtmlContent: string | null;
}

export interface PreviewRequest {
  readonly organizationId: string;
  readonly name: string;
  /** The latest when undefined. */
  readonly version: number | undefined;
  readonly variables: Readonly<Record<string, unknown>>;
}

export async function previewTemplate(templates: TemplateReader, request: PreviewRequest): Promise<TemplatePreview> {
  const version = await templates.read(request.organizationId, request.name, request.version);
  if (!version) throw new TemplateNotFoundProblem(request.name, request.version);
  const { message, problems } = await renderVersion(request.organizationId, version, request.variables, '');
  if (!message) throw new ValidationProblem(problems);
  return { Name: version.Name, Version: version.Version, Subject: message.subject, TextContent: message.text ?? null, HtmlContent: message.html ?? null };
}
