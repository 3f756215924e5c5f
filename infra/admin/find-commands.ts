/**
 * Find and undo (CONTRACT section 16 item 3): `org list`, `org delete`, `user list`, `user show`
 * and `user delete`, over the directory store (directory-store.ts). A list prints a count line
 * and then one line per entry; with `--json`, one object holding the array. Apart from cli.ts,
 * which runs the command line (output, errors); what both share is in command-frame.ts.
 */
import type { Command } from 'commander';
import { Option } from 'commander';
import { InvalidArgumentError } from '../../functions/shared/store/records';
import type { User } from '../../functions/shared/store/records';
import { noticeReport, untold } from './cancelling';
import type { Leaf } from './command-frame';
import { AdminDirectory } from './directory-store';

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const listed = (head: string, lines: readonly string[]) => [head, ...lines.map((line) => `  ${line}`)].join('\n');
/** A person by e-mail address, a service user by its name (docs/keys.md). */
const describeUser = (user: User) => (user.serviceName !== undefined ? `"${user.serviceName}" (service user)` : String(user.email));
const userJson = (user: User) => (user.serviceName !== undefined ? { id: user.id, email: null, service: true, name: user.serviceName } : { id: user.id, email: user.email });

export function addFindCommands(groups: { readonly org: Command; readonly user: Command }, leaf: Leaf): void {
  const { org, user } = groups;

  leaf(org, 'list', 'list every Organization with its members and senders', async (store) => {
    const organizations = await new AdminDirectory(store).organizations();
    return {
      human: listed(
        count(organizations.length, 'Organization', 'Organizations'),
        organizations.map((o) => `${o.id}  "${o.name}"  ${count(o.members.length, 'member', 'members')}, senders: ${o.senders.join(', ') || 'none'}`),
      ),
      json: { organizations },
    };
  });

  leaf(org, 'delete', 'delete an Organization: refused while it has members, pending scheduled messages or sender identities, unless --force', async (store, o, admin) => {
    const tenants = admin.tenants();
    const cancelling = admin.cancelling();
    const removed = await new AdminDirectory(store, cancelling).deleteOrganization(o.org!, Boolean(o.force), tenants && ((id) => tenants.remove(id)));
    const notice = noticeReport(removed.cancelledSchedules.length, untold(cancelling), admin.local);
    const also = [
      removed.members.length > 0 && `removed ${count(removed.members.length, 'member', 'members')}`,
      removed.cancelledSchedules.length > 0 && `cancelled ${count(removed.cancelledSchedules.length, 'scheduled message', 'scheduled messages')}`,
      removed.senders.length > 0 && `dropped ${count(removed.senders.length, 'sender identity', 'sender identities')}`,
      tenants && 'deleted its SES tenant',
    ].filter((part): part is string => typeof part === 'string');
    return {
      human: `Organization ${removed.id} deleted${also.length > 0 ? ` (${also.join(', ')})` : ''}${notice.human}`,
      json: { id: removed.id, deleted: true, members: removed.members, cancelledSchedules: removed.cancelledSchedules, ...notice.json, senders: removed.senders, tenantDeleted: tenants !== undefined },
    };
  })
    .requiredOption('--org <uuid>', 'Organization id')
    .option('--force', 'also remove its members, cancel its pending scheduled messages and drop its sender identities')
    .addHelpText('after', '\nWith SES tenants on (a deployed table, or SES_TENANTS=true), its SES tenant is deleted too.');

  leaf(user, 'list', 'list every user, or the members of one Organization', async (store, o) => {
    const users = await new AdminDirectory(store).users(o.org);
    const whose = o.org === undefined ? '' : ` in Organization ${o.org.toLowerCase()}`;
    return {
      human: listed(`${count(users.length, 'user', 'users')}${whose}`, users.map((u) => `${u.id}  ${describeUser(u)}`)),
      json: { users: users.map(userJson) },
    };
  }).option('--org <uuid>', 'only the members of this Organization');

  leaf(user, 'show', 'show a user, found by id or e-mail address: its Organizations and its key (masked)', async (store, o) => {
    if ((o.user === undefined) === (o.email === undefined)) throw new InvalidArgumentError('one of --user U or --email E is required');
    const found = await new AdminDirectory(store).user(o.user !== undefined ? { id: o.user } : { email: o.email! });
    return {
      human: [
        `User ${describeUser(found)} (${found.id})`,
        `  organizations: ${found.organizations.join(', ') || 'none'}`,
        `  key: ${found.key ? `${found.key.masked}, created ${found.key.createdAt}` : 'none'}`,
      ].join('\n'),
      json: { ...userJson(found), organizations: found.organizations, key: found.key ? { masked: found.key.masked, createdAt: found.key.createdAt } : null },
    };
  })
    .addOption(new Option('--user <uuid>', 'user id').conflicts('email'))
    .addOption(new Option('--email <email>', "the user's e-mail address").conflicts('user'));

  leaf(user, 'delete', 'delete a user: its key (it stops working, the messages it scheduled are cancelled), its memberships and, with a user pool, its Cognito user', async (store, o, admin) => {
    const pool = admin.userPool(o.userPoolId);
    const cancelling = admin.cancelling();
    const directory = new AdminDirectory(store, cancelling);
    // Out of the pool first: interrupted after it, the user can no longer sign in, never the other way round.
    const email = pool && (await directory.user({ id: o.user! })).email;
    const fromPool = pool && email !== undefined ? await pool.remove(email) : undefined;
    const removed = await directory.deleteUser(o.user!);
    const notice = noticeReport(removed.cancelledSchedules.length, cancelling, admin.local);
    return {
      human: `User ${describeUser(removed)} (${removed.id}) deleted${removed.key ? ', its key revoked' : ''}${removed.cancelledSchedules.length > 0 ? `, ${count(removed.cancelledSchedules.length, 'scheduled message', 'scheduled messages')} it made cancelled` : ''}${removed.organizations.length > 0 ? `, removed from ${count(removed.organizations.length, 'Organization', 'Organizations')}` : ''}${fromPool === undefined ? '' : fromPool ? ', removed from the user pool' : ', was not in the user pool'}${notice.human}`,
      json: { ...userJson(removed), deleted: true, keyRevoked: removed.key !== undefined, cancelledSchedules: removed.cancelledSchedules, ...notice.json, organizations: removed.organizations, userPool: fromPool === undefined ? null : fromPool ? 'removed' : 'absent' },
    };
  })
    .requiredOption('--user <uuid>', 'user id')
    .option('--user-pool-id <id>', 'also delete the Cognito user of the settings page (stack output UserPoolId; default USER_POOL_ID)');
}
