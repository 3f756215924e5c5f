/**
 * Every item a Query or Scan finds, page after page: DynamoDB answers at most 1 MB a page and says
 * where to go on with `LastEvaluatedKey`. For the reads a caller needs whole: the small
 * per-Organization lists (templates, pending schedules, suppressions), a schedule's or a claim's
 * partition, and the operator's scans (the admin directory, the key sweep, pending schedules).
 */
import type { DynamoDBDocumentClient, QueryCommandInput, ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Item } from './batch-get';

type Page = { readonly Items?: Item[] | undefined; readonly LastEvaluatedKey?: Item | undefined };

async function allPages(read: (start: Item | undefined) => Promise<Page>): Promise<Item[]> {
  const found: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await read(start);
    found.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}

export function queryAll(client: DynamoDBDocumentClient, input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): Promise<Item[]> {
  return allPages((start) => client.send(new QueryCommand({ ...input, ...(start && { ExclusiveStartKey: start }) })));
}

export function scanAll(client: DynamoDBDocumentClient, input: Omit<ScanCommandInput, 'ExclusiveStartKey'>): Promise<Item[]> {
  return allPages((start) => client.send(new ScanCommand({ ...input, ...(start && { ExclusiveStartKey: start }) })));
}
