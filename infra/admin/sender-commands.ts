/**
 * `sender add`, `sender remove` and `sender list`: the domains and addresses an Organization may
 * send from (CONTRACT sections 4 and 16 item 2). Each is also an Amazon SES identity: `sender add`
 * makes it one when SES lacks it and prints the DNS records to publish (ses-identities.ts), then
 * stores it and, with SES tenants, associates it with the Organization's tenant; `sender list`
 * prints SES's verification and DKIM status of each. Apart from cli.ts, which runs the command
 * line (output, errors); what both share is in command-frame.ts.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import type { SenderIdentity } from '../../functions/shared/domain/sender-identity';
import { InvalidArgumentError } from '../../functions/shared/store/records';
import { normaliseSenderIdentity } from './admin-store';
import type { Action, Leaf } from './command-frame';
import type { AddedIdentity, IdentityStatus } from './ses-identities';
import { TenantError } from './ses-tenants';

function identityOf(options: { domain?: string; address?: string }): SenderIdentity {
  if (options.domain !== undefined) return { domain: options.domain };
  if (options.address !== undefined) return { address: options.address };
  throw new InvalidArgumentError('one of --domain D or --address A is required');
}

function describeStatus(status: IdentityStatus, local: boolean): string {
  if (local) return 'verified (local stack)';
  if (status.verificationStatus === 'NOT_FOUND') return 'NOT an Amazon SES identity (run "sender add" again to create it)';
  return `${status.verified ? 'verified' : 'NOT verified'} (${status.verificationStatus})${status.dkimStatus ? `, DKIM ${status.dkimStatus}` : ''}`;
}

function statusJson(status: IdentityStatus): Record<string, unknown> {
  return { verified: status.verified, verificationStatus: status.verificationStatus, dkimStatus: status.dkimStatus };
}

/** What `sender add` says of SES: the identity's state and the records to publish. */
function describeAdded(added: AddedIdentity, local: boolean): string[] {
  const records = added.records.map((record) => `  ${record.name}  ${record.type}  ${record.value}`);
  const publish = records.length > 0 ? '; publish these DNS records:' : '';
  if (local) return [`  Amazon SES: counted as verified (local stack)${records.length > 0 ? '; in AWS it would need these DNS records:' : ''}`, ...records];
  const what = added.created ? `created${added.identity.includes('@') ? ' (SES e-mails that address a link to verify it)' : ' with Easy DKIM'}` : 'already there';
  const tokens = !added.identity.includes('@') && !added.records.some((record) => record.type === 'CNAME') ? ' (SES gave no DKIM tokens yet: see "sender list")' : '';
  return [`  Amazon SES identity ${added.identity} ${what}: ${describeStatus(added, false)}${publish}${tokens}`, ...records];
}

export function addSenderCommands(program: Command, leaf: Leaf): void {
  const sender = program.command('sender').description('sender identities: the domains and addresses an Organization may send from (Amazon SES identities)');

  const change = (add: boolean): Action => async (store, o, admin) => {
    const identity = identityOf(o);
    const organizationId = (await store.getOrganization(o.org!)).id;
    const tenants = admin.tenants();
    // SES first: an identity SES refused is never stored as allowed.
    const added = add ? await admin.identities().ensure(normaliseSenderIdentity(identity), o.mailFrom) : undefined;
    const stored = add ? await store.addSender(organizationId, identity) : await store.removeSender(organizationId, identity);
    // With SES tenants, the identity joins (or leaves) the Organization's tenant too.
    try {
      await (add ? tenants?.associateIdentity(organizationId, stored) : tenants?.dissociateIdentity(organizationId, stored));
    } catch (error) {
      const finish = add ? 'finish it with "org tenants sync"' : 'remove the association in Amazon SES (DeleteTenantResourceAssociation)';
      throw new TenantError(`${stored} was ${add ? 'added to' : 'removed from'} Organization ${organizationId}, but ${(error as Error).message}; ${finish}`, { cause: error });
    }
    const line = `Organization ${organizationId} may ${add ? 'now' : 'no longer'} send from ${'domain' in identity ? 'the domain ' : ''}${stored}`;
    const json = { organizationId, sender: stored, type: 'domain' in identity ? 'domain' : 'address', allowed: add };
    if (!added) return { human: line, json };
    const local = admin.identities().local;
    return {
      human: [line, ...describeAdded(added, local)].join('\n'),
      json: { ...json, identity: { created: added.created, ...statusJson(added) }, records: added.records },
    };
  };
  for (const [name, add] of [['add', true], ['remove', false]] as const) {
    const command = leaf(sender, name, add ? 'allow a sender domain or exact address; in AWS, create it as an Amazon SES identity and print the DNS records to publish' : 'stop allowing a sender domain or exact address (its SES identity stays)', change(add))
      .requiredOption('--org <uuid>', 'Organization id')
      .addOption(new Option('--domain <domain>', 'a domain, e.g. example.com (any address at it)').conflicts('address'))
      .addOption(new Option('--address <email>', 'one exact address, e.g. billing@example.com').conflicts('domain'));
    if (add) {
      command
        .option('--mail-from <domain>', 'with --domain: a custom MAIL FROM subdomain, e.g. bounce.example.com (prints its MX and SPF records)')
        .addHelpText('after', '\nIn AWS (--table) the identity is created in Amazon SES when missing (SES_ENDPOINT overrides where). Locally it counts as verified at once.');
    }
  }

  leaf(sender, 'list', "list the Organization's sender identities with Amazon SES's verification and DKIM status", async (store, o, admin) => {
    const organization = await store.getOrganization(o.org!);
    const identities = admin.identities();
    const statuses = await Promise.all(organization.senders.map((identity) => identities.status(identity)));
    return {
      human: [
        `Organization ${organization.id} has ${statuses.length} sender ${statuses.length === 1 ? 'identity' : 'identities'}`,
        ...statuses.map((status) => `  ${status.identity}  ${describeStatus(status, identities.local)}`),
      ].join('\n'),
      json: {
        organizationId: organization.id,
        senders: statuses.map((status) => ({ sender: status.identity, type: status.identity.includes('@') ? 'address' : 'domain', ...statusJson(status) })),
      },
    };
  }).requiredOption('--org <uuid>', 'Organization id');
}
