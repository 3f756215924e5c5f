/**
 * Templates in the one table (CONTRACT section 14), one partition per Organization:
 *
 * | item            | pk          | sk                      | attributes                                         |
 * |-----------------|-------------|-------------------------|----------------------------------------------------|
 * | template (head) | TPL#<orgId> | T#<name>                | name, latestVersion, updatedAt, and a copy of the latest version |
 * | version         | TPL#<orgId> | V#<name>#<version, 10 digits> | version, createdAt, data, parts              |
 * | … its larger body | TPL#<orgId> | V#<name>#<version>#P<n> | data                                           |
 * | count           | TPL#<orgId> | COUNT                   | count (templates held, at most 100)                |
 *
 * A version is gzip of its JSON fields, in one item when it fits (nearly always: text and HTML
 * shrink to a third or less), else cut into parts as scheduled messages are. Saving counts a new
 * name (within the limit), writes the next version on the condition that its number is free (so
 * two saves never make the same number) and moves the head forward. The head carries a copy of its
 * latest version, so the send path reads whichever version it needs with one GetItem. Deleting a
 * template deletes its versions: made again, it starts at version 1.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { gunzipSync, gzipSync } from 'node:zlib';
import { splitBody } from '../store/item-parts';
import { batchGetAll } from '../store/batch-get';
import { queryAll } from '../store/query-all';
import { StorageUnavailableProblem } from '../http/problems';
import { isStorageFault, withStorageFaults } from '../store/storage-errors';
import { TEMPLATE_PARTITION } from '../store/table';
import type { TemplateContent, TemplateSummary, TemplateVersion } from './template-rules';
import { TEMPLATE_LIMITS } from './template-rules';

/** The Organization already holds `TEMPLATE_LIMITS.perOrganization` templates. */
export class TemplateLimitError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TemplateLimitError';
  }
}

/** What the send path needs of the store. */
export interface TemplateReader {
  /** The version asked for, or the latest; undefined when the template or that version does not exist. */
  read(organizationId: string, name: string, version?: number): Promise<TemplateVersion | undefined>;
}

export interface TemplateStore extends TemplateReader {
  save(organizationId: string, name: string, content: TemplateContent, now: Date): Promise<TemplateVersion>;
  list(organizationId: string): Promise<TemplateSummary[]>;
  /** False when there was no such template. */
  remove(organizationId: string, name: string): Promise<boolean>;
}

const partition = (organizationId: string) => `${TEMPLATE_PARTITION}${organizationId.toLowerCase()}`;
const versionSk = (name: string, version: number) => `V#${name}#${String(version).padStart(10, '0')}`;
const keys = {
  head: (org: string, name: string) => ({ pk: partition(org), sk: `T#${name}` }),
  version: (org: string, name: string, version: number) => ({ pk: partition(org), sk: versionSk(name, version) }),
  part: (org: string, name: string, version: number, part: number) => ({ pk: partition(org), sk: `${versionSk(name, version)}#P${part}` }),
  count: (org: string) => ({ pk: partition(org), sk: 'COUNT' }),
};
/** A save that lost a race for the next version number tries again this many times. */
const SAVE_ATTEMPTS = 5;

const encode = (content: TemplateContent): Uint8Array =>
  gzipSync(JSON.stringify({ Subject: content.Subject, TextContent: content.TextContent, HtmlContent: content.HtmlContent }));

function decode(name: string, item: Record<string, unknown>, chunks: readonly Uint8Array[]): TemplateVersion {
  const content = JSON.parse(gunzipSync(Buffer.concat(chunks)).toString('utf8')) as TemplateContent;
  return { Name: name, Version: Number(item.version), CreatedAt: String(item.createdAt), ...content };
}

export class DynamoDbTemplateStore implements TemplateStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async read(organizationId: string, name: string, version?: number): Promise<TemplateVersion | undefined> {
    const key = version === undefined ? keys.head(organizationId, name) : keys.version(organizationId, name, version);
    // Consistent: a version saved a moment ago is sendable at once.
    const { Item: item } = await withStorageFaults(() => this.client.send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true })));
    if (!item || !(item.data instanceof Uint8Array)) return undefined;
    const number = Number(item.version);
    const parts = Number(item.parts ?? 1);
    const rest =
      parts > 1
        ? await withStorageFaults(() =>
            batchGetAll(this.client, this.tableName, Array.from({ length: parts - 1 }, (_, i) => keys.part(organizationId, name, number, i + 1)), {}),
          )
        : [];
    const ordered = rest.sort((a, b) => String(a.sk).localeCompare(String(b.sk), 'en', { numeric: true })).map((part) => part.data as Uint8Array);
    return decode(name, item, [item.data, ...ordered]);
  }

  async save(organizationId: string, name: string, content: TemplateContent, now: Date): Promise<TemplateVersion> {
    const chunks = splitBody(encode(content));
    const createdAt = now.toISOString();
    await this.ensureHead(organizationId, name, createdAt);
    for (let attempt = 1; ; attempt++) {
      const version = (await this.highestVersion(organizationId, name)) + 1;
      // Parts first: a version never names parts that are not there.
      for (let i = 1; i < chunks.length; i += 25) {
        const batch = chunks.slice(i, i + 25).map((data, j) => ({ PutRequest: { Item: { ...keys.part(organizationId, name, version, i + j), data } } }));
        await withStorageFaults(() => this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: batch } })));
      }
      const body = { version, createdAt, data: chunks[0], parts: chunks.length };
      // The condition makes each number one save's: a save that lost the race takes the next one.
      const took = await this.conditional(() =>
        this.client.send(new PutCommand({ TableName: this.tableName, Item: { ...keys.version(organizationId, name, version), ...body }, ConditionExpression: 'attribute_not_exists(pk)' })),
      );
      if (!took) {
        if (attempt >= SAVE_ATTEMPTS) throw new StorageUnavailableProblem();
        continue;
      }
      // The head moves forward only: a slower save of an older version leaves it where it is.
      const moved = await this.conditional(() =>
        this.client.send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: keys.head(organizationId, name),
            UpdateExpression: 'SET latestVersion = :version, updatedAt = :at, createdAt = :at, #data = :data, parts = :parts, version = :version',
            ConditionExpression: 'attribute_exists(pk) AND latestVersion < :version',
            ExpressionAttributeNames: { '#data': 'data' },
            ExpressionAttributeValues: { ':version': version, ':at': createdAt, ':data': body.data, ':parts': body.parts },
          }),
        ),
      );
      if (!moved && !(await this.headExists(organizationId, name))) {
        // A delete took the head after listing the versions, before this one was written: left
        // here, it would be a version no list shows, and the next template of the name would not
        // start at 1. So it goes too, and the save starts over on a new head, after the delete.
        await this.deleteAll([keys.version(organizationId, name, version), ...chunks.slice(1).map((_, i) => keys.part(organizationId, name, version, i + 1))]);
        if (attempt >= SAVE_ATTEMPTS) throw new StorageUnavailableProblem();
        await this.ensureHead(organizationId, name, createdAt);
        continue;
      }
      return { Name: name, Version: version, CreatedAt: createdAt, ...content };
    }
  }

  /**
   * The template's head, made (and counted, within the Organization's limit) when the name is new.
   * DynamoDB's conditional writes, not a transaction (the local emulator has none): the count is
   * taken first, and given back when another save made the head meanwhile.
   */
  private async ensureHead(organizationId: string, name: string, at: string): Promise<void> {
    if (await this.headExists(organizationId, name)) return;
    const counted = await this.conditional(() =>
      this.client.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: keys.count(organizationId),
          UpdateExpression: 'ADD #count :one',
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':one': 1, ':limit': TEMPLATE_LIMITS.perOrganization },
        }),
      ),
    );
    if (!counted) throw new TemplateLimitError(`the Organization already holds ${TEMPLATE_LIMITS.perOrganization} templates, the most it may; delete one first`);
    const made = await this.conditional(() =>
      this.client.send(new PutCommand({ TableName: this.tableName, Item: { ...keys.head(organizationId, name), name, latestVersion: 0, updatedAt: at }, ConditionExpression: 'attribute_not_exists(pk)' })),
    );
    if (!made) await this.uncount(organizationId);
  }

  private async headExists(organizationId: string, name: string): Promise<boolean> {
    const { Item: head } = await withStorageFaults(() =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: keys.head(organizationId, name), ConsistentRead: true, ProjectionExpression: 'latestVersion' })),
    );
    return head !== undefined;
  }

  private async uncount(organizationId: string): Promise<void> {
    await withStorageFaults(() =>
      this.client.send(new UpdateCommand({ TableName: this.tableName, Key: keys.count(organizationId), UpdateExpression: 'ADD #count :minus', ExpressionAttributeNames: { '#count': 'count' }, ExpressionAttributeValues: { ':minus': -1 } })),
    );
  }

  /**
   * The highest version stored (0 for none). Versions sort by their zero-padded number, each just
   * before its parts (`…#P1`), which carry no number: read from the top, the first item with one.
   */
  private async highestVersion(organizationId: string, name: string): Promise<number> {
    let start: Record<string, unknown> | undefined;
    do {
      const page = await withStorageFaults(() =>
        this.client.send(
          new QueryCommand({
            TableName: this.tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :versions)',
            FilterExpression: 'attribute_exists(version)',
            ExpressionAttributeValues: { ':pk': partition(organizationId), ':versions': `V#${name}#` },
            ProjectionExpression: 'version',
            ScanIndexForward: false,
            ConsistentRead: true,
            Limit: 4,
            ExclusiveStartKey: start,
          }),
        ),
      );
      const [top] = page.Items ?? [];
      if (top) return Number(top.version);
      start = page.LastEvaluatedKey;
    } while (start);
    return 0;
  }

  /** Runs a conditional write: false when its condition failed. */
  private async conditional(write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      if (isStorageFault(error)) throw new StorageUnavailableProblem({ cause: error });
      throw error;
    }
  }

  /** Every item of the Organization's partition whose sort key starts with `prefix`, with the attributes named. */
  private async query(organizationId: string, prefix: string, projection: string): Promise<Record<string, unknown>[]> {
    return withStorageFaults(() =>
      queryAll(this.client, {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': partition(organizationId), ':prefix': prefix },
        ExpressionAttributeNames: { '#name': 'name' },
        ProjectionExpression: projection,
        ConsistentRead: true,
      }),
    );
  }

  /** Deletes these items, 25 to a batch, retrying what DynamoDB leaves unprocessed a few times. */
  private async deleteAll(itemKeys: readonly Record<string, unknown>[]): Promise<void> {
    for (let i = 0; i < itemKeys.length; i += 25) {
      const batch = itemKeys.slice(i, i + 25).map((key) => ({ DeleteRequest: { Key: key } }));
      let pending: typeof batch | undefined = batch;
      for (let attempt = 0; pending && pending.length > 0; attempt++) {
        if (attempt >= 4) throw new StorageUnavailableProblem();
        const result = await withStorageFaults(() => this.client.send(new BatchWriteCommand({ RequestItems: { [this.tableName]: pending as typeof batch } })));
        pending = result.UnprocessedItems?.[this.tableName] as typeof batch | undefined;
      }
    }
  }

  async list(organizationId: string): Promise<TemplateSummary[]> {
    const heads = await this.query(organizationId, 'T#', '#name, latestVersion, updatedAt');
    // A head with no version yet is a save under way (or one that failed before its first version).
    return heads.filter((item) => Number(item.latestVersion) >= 1).map((item) => ({ Name: String(item.name), LatestVersion: Number(item.latestVersion), UpdatedAt: String(item.updatedAt) }));
  }

  async remove(organizationId: string, name: string): Promise<boolean> {
    // Versions first, the head last: a failure part-way leaves the template listed, to delete again.
    const items = await this.query(organizationId, `V#${name}#`, 'pk, sk, #name');
    await this.deleteAll(items.map((item) => ({ pk: item.pk, sk: item.sk })));
    const removed = await this.conditional(() =>
      this.client.send(new DeleteCommand({ TableName: this.tableName, Key: keys.head(organizationId, name), ConditionExpression: 'attribute_exists(pk)' })),
    );
    if (removed) await this.uncount(organizationId);
    return removed;
  }
}
