/** Counting an SDK client's commands: how many reads and writes a piece of code really makes. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Counts every command `client` sends from now on, by name (GetItemCommand, UpdateCommand's UpdateItemCommand …). */
export function countCommands(client: DynamoDBDocumentClient): Map<string, number> {
  const calls = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      calls.set(context.commandName!, (calls.get(context.commandName!) ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
  return calls;
}
