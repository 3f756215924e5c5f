/**
 * `GET /v1.2/me/templates` and `POST /v1.2/me/templates/{Name}/render`: the templates of the
 * signed-in user's Organizations, read only, and a preview of one rendered with the Variables the
 * page gives, by the same store and the same rendering as the templates endpoints (`GET
 * /v1.2/templates` and its render). Saving and deleting stay with an API key or the admin CLI.
 */
import type { Json } from '../shared/http/body-rules';
import { MalformedJsonProblem } from '../shared/http/problems';
import type { TemplatePreview } from '../shared/templates/preview';
import { previewTemplate } from '../shared/templates/preview';
import type { TemplateStore } from '../shared/templates/template-store';
import { validateRender } from '../templates/validation';
import type { MemberOrganization } from './organizations';
import { memberOrganization, perOrganization } from './organizations';

export interface TemplateView {
  readonly OrganizationId: string;
  readonly Name: string;
  readonly LatestVersion: number;
  readonly UpdatedAt: string;
}

type Query = Readonly<Record<string, string | undefined>>;
type Store = Pick<TemplateStore, 'list' | 'read'>;

/** Every member Organization's templates, or the one named's; by Organization, then name. */
export async function listTemplates(member: readonly MemberOrganization[], query: Query, store: Store): Promise<{ Templates: TemplateView[] }> {
  const lists = await perOrganization(member, query, (organizationId) => store.list(organizationId));
  return {
    Templates: lists.flatMap(({ organization, items }) =>
      items.sort((a, b) => (a.Name < b.Name ? -1 : 1)).map(({ Name, LatestVersion, UpdatedAt }) => ({ OrganizationId: organization.id, Name, LatestVersion, UpdatedAt })),
    ),
  };
}

function parseBody(body: string | undefined, isBase64: boolean | undefined): unknown {
  const text = body === undefined ? '' : isBase64 ? Buffer.from(body, 'base64').toString('utf8') : body;
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new MalformedJsonProblem('The body must be a JSON object such as {"OrganizationId": "…", "Variables": {"name": "Ada"}}.');
  }
}

/** The body is the render endpoint's (`OrganizationId`, `Version`, `Variables`); the Organization must be one of the user's. */
export async function previewMemberTemplate(member: readonly MemberOrganization[], name: string | undefined, body: string | undefined, isBase64: boolean | undefined, store: Store): Promise<TemplatePreview> {
  const request = validateRender(name, parseBody(body, isBase64));
  const organization = memberOrganization(member, request.organizationId);
  return previewTemplate(store, { ...request, organizationId: organization.id });
}
