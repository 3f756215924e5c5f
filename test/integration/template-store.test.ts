/**
 * The template store against dynalite (CONTRACT section 14 item 2): a version too large for one
 * item is stored in parts and still numbered after, and a save that races a delete of its
 * template leaves no version behind that no list shows.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDynamoDbClient } from '../../functions/shared/runtime/clients';
import { queryAll } from '../../functions/shared/store/query-all';
import { DynamoDbTemplateStore } from '../../functions/shared/templates/template-store';
import type { Harness } from '../support/harness';
import { startHarness } from '../support/harness';

let harness: Harness;
let store: DynamoDbTemplateStore;

beforeAll(async () => {
  harness = await startHarness();
  store = new DynamoDbTemplateStore(harness.admin.client, harness.config.tableName);
});
afterAll(async () => harness?.stop());

/** The sort keys of every version item and part of a template, as stored. */
async function versionItems(organizationId: string, name: string): Promise<string[]> {
  const items = await queryAll(harness.admin.client, {
    TableName: harness.config.tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': `TPL#${organizationId}`, ':prefix': `V#${name}#` },
    ProjectionExpression: 'sk',
    ConsistentRead: true,
  });
  return items.map((item) => String(item.sk));
}

describe('the template store', () => {
  it('numbers the versions of a template stored in parts one after another', async () => {
    const organizationId = randomUUID();
    // Random text hardly compresses: the gzip of this is larger than one part.
    const html = randomBytes(375_000).toString('base64');
    expect(html.length).toBeLessThanOrEqual(512 * 1024);
    for (const expected of [1, 2, 3]) {
      const saved = await store.save(organizationId, 'big', { Subject: `Big ${expected}`, HtmlContent: html }, new Date());
      expect(saved.Version).toBe(expected);
    }
    // Each version in two items: the version and its one part.
    expect((await versionItems(organizationId, 'big')).filter((sk) => sk.includes('#P'))).toHaveLength(3);
    const second = await store.read(organizationId, 'big', 2);
    expect([second?.Subject, second?.HtmlContent === html]).toEqual(['Big 2', true]);
    expect(await store.list(organizationId)).toEqual([{ Name: 'big', LatestVersion: 3, UpdatedAt: expect.any(String) }]);
  });

  it('leaves no version behind when the template is deleted while a save is writing one', async () => {
    const organizationId = randomUUID();
    await store.save(organizationId, 'raced', { Subject: 'First', TextContent: 'one' }, new Date());
    // A client whose first move of the head waits for a delete of the whole template: the delete
    // has listed the versions before this save wrote its own, as a concurrent DELETE can.
    const client = createDynamoDbClient(harness.config);
    let raced = false;
    client.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { UpdateExpression?: string };
        if (!raced && input.UpdateExpression?.startsWith('SET latestVersion')) {
          raced = true;
          expect(await store.remove(organizationId, 'raced')).toBe(true);
        }
        return next(args);
      },
      { step: 'initialize', name: 'deleteBeforeTheHeadMoves' },
    );
    try {
      const saved = await new DynamoDbTemplateStore(client, harness.config.tableName).save(organizationId, 'raced', { Subject: 'Second', TextContent: 'two' }, new Date());
      expect(raced).toBe(true);
      // The save comes after the delete: a new template, numbered from 1, and listed.
      expect(saved.Version).toBe(1);
      expect(await store.list(organizationId)).toEqual([{ Name: 'raced', LatestVersion: 1, UpdatedAt: expect.any(String) }]);
      expect(await versionItems(organizationId, 'raced')).toEqual([expect.stringMatching(/^V#raced#0000000001$/)]);
      expect(await store.read(organizationId, 'raced')).toMatchObject({ Version: 1, Subject: 'Second', TextContent: 'two' });
    } finally {
      client.destroy();
    }
  });
});
