/**
 * What a template is (CONTRACT section 14), free of the engine: its name, its fields, its limits,
 * and the shape the store and the API share. Importing this costs nothing at cold start; the
 * Handlebars engine (engine.ts) is loaded only when a template is compiled or rendered.
 */

/** 1..64 of A-Za-z0-9, `_` and `-`: also a valid Amazon SES message-tag value. */
export const TEMPLATE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const TEMPLATE_LIMITS = {
  /** Templates one Organization may hold. */
  perOrganization: 100,
  /** Subject, TextContent and HtmlContent together, in UTF-8 bytes. */
  templateBytes: 512 * 1024,
  /** One rendered message's Subject, TextContent and HtmlContent together, in UTF-8 bytes. */
  renderedBytes: 1024 * 1024,
  /**
   * Lookups one rendering may make. Nested `{{#each}}` blocks multiply: three levels over a list
   * of a thousand would be a billion steps; this stops such a rendering long before it hurts.
   */
  renderSteps: 1_000_000,
} as const;

/** The send request's field naming a template to render (`Template: { Name, Version?, Variables }`). */
export const TEMPLATE_FIELD = 'Template';

export const TEMPLATE_FIELDS = ['Subject', 'TextContent', 'HtmlContent'] as const;
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];

/** A template's source: what a version holds. */
export interface TemplateContent {
  readonly Subject: string;
  readonly TextContent?: string;
  readonly HtmlContent?: string;
}

/** One stored version, immutable once written. */
export interface TemplateVersion extends TemplateContent {
  readonly Name: string;
  readonly Version: number;
  readonly CreatedAt: string;
}

/** One template of an Organization's list. */
export interface TemplateSummary {
  readonly Name: string;
  readonly LatestVersion: number;
  readonly UpdatedAt: string;
}

/** A message's template, as asked for (`Template` on a Message): rendered after authorisation. */
export interface TemplateUse {
  readonly name: string;
  readonly version: number | undefined;
  readonly variables: Readonly<Record<string, unknown>>;
}

/** What a sent message says it came from (echoed in its status and webhooks). */
export interface TemplateReference {
  readonly name: string;
  readonly version: number;
}

/**
 * A `{ name, version }` as stored on a status item or carried in a message's tags (the version
 * may be a string there), or undefined when the value is not one: a template name, and a version
 * from 1. The one reading of a template reference, wherever it comes from.
 */
export function readTemplateReference(value: unknown): TemplateReference | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { name, version } = value as Record<string, unknown>;
  // A tag carries the version as the decimal the service wrote (`String(version)`), nothing looser.
  const number = typeof version === 'number' ? version : typeof version === 'string' && /^[1-9]\d{0,15}$/.test(version) ? Number(version) : NaN;
  return typeof name === 'string' && TEMPLATE_NAME.test(name) && Number.isInteger(number) && number >= 1 ? { name, version: number } : undefined;
}

/** A template reference as the status answer and webhooks show it. */
export const templateView = (template: TemplateReference | undefined) => (template ? { Template: { Name: template.name, Version: template.version } } : {});

export function templateBytes(content: TemplateContent): number {
  return TEMPLATE_FIELDS.reduce((sum, field) => sum + Buffer.byteLength(content[field] ?? '', 'utf8'), 0);
}
