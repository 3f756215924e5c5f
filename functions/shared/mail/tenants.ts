/**
 * Organizations as Amazon SES tenants (CONTRACT section 11 item 4): each Organization's tenant
 * name, derived from its id so that the send path names it without reading anything, and how a
 * send refused because SES paused that tenant is told apart from other pauses.
 */
import { SendingPausedException } from '@aws-sdk/client-sesv2';

/** `org-<uuid>`: 40 characters of letters, digits and hyphens, inside SES's 64 of `[A-Za-z0-9_-]`. */
export function tenantNameOf(organizationId: string): string {
  return `org-${organizationId.toLowerCase()}`;
}

/**
 * True for SES's refusal of a send because the named tenant's sending is paused. SES answers
 * `SendingPausedException` for a paused account, configuration set or tenant alike; only its
 * message names the tenant, so that is what is read (never shown to the client).
 */
export function refusedForPausedTenant(error: unknown): boolean {
  return error instanceof SendingPausedException && /tenant/i.test(error.message);
}
