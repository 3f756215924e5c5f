/**
 * Service users (docs/keys.md): a user that is an integration, not a person. It has a name and no
 * e-mail, so no sign-in and no settings page; it is a member of one Organization from the start
 * (the admin store refuses it a second); its one key is managed with the same `key` commands as
 * anyone's, so a person leaving breaks nothing that runs under it.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { itemKey } from '../../functions/shared/store/table';
import type { DynamoDbAdminStore } from './admin-store';
import { InvalidArgumentError, requireUuid } from './admin-store';

const MAX_NAME = 128;

export async function createServiceUser(store: DynamoDbAdminStore, input: { readonly name: string; readonly organizationId: string }): Promise<{ readonly id: string; readonly serviceName: string }> {
  const name = input.name.trim();
  // One line of the CLI's output each: no control characters.
  if (name === '' || name.length > MAX_NAME || /[\u0000-\u001f\u007f]/.test(name)) throw new InvalidArgumentError(`--name must be 1 to ${MAX_NAME} characters with no control characters`);
  const organizationId = requireUuid(input.organizationId, 'the Organization id');
  await store.getOrganization(organizationId);
  const id = randomUUID();
  await store.client.send(
    new PutCommand({
      TableName: store.tableName,
      Item: { ...itemKey.user(id), userId: id, serviceName: name, serviceOrganization: organizationId, createdAt: new Date().toISOString() },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  try {
    await store.addMember(organizationId, id);
  } catch (error) {
    // The Organization went away meanwhile: no service user is left outside one.
    await store.client.send(new DeleteCommand({ TableName: store.tableName, Key: itemKey.user(id) }));
    throw error;
  }
  return { id, serviceName: name };
}
