/**
 * Every item a Query finds, page after page: DynamoDB answers at most 1 MB a page and says where
 * to go on with `LastEvaluatedKey`. For the small per-Organization lists (templates, pending
 * schedules, suppressions) that a caller needs whole.
 */
import type { DynamoDBDocumentClient, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Item } from './batch-get';

export async function queryAll(client: DynamoDBDocumentClient, input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): Promise<Item[]> {
  const found: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await client.send(new QueryCommand({ ...input, ...(start && { ExclusiveStartKey: start }) }));
    found.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return found;
}
