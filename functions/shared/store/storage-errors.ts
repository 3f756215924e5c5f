import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { StorageUnavailableProblem } from '../errors';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);
const NETWORK_NAMES = new Set(['TimeoutError', 'AbortError', 'RequestTimeout']);

/** True for errors that mean "DynamoDB did not answer usefully", as opposed to a bug of ours. */
export function isStorageFault(error: unknown): boolean {
  if (error instanceof DynamoDBServiceException) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return (code !== undefined && NETWORK_CODES.has(code)) || NETWORK_NAMES.has(error.name);
}

/** Runs a storage call, turning DynamoDB and network faults into a 503; other errors pass. */
export async function withStorageFaults<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isStorageFault(error)) throw new StorageUnavailableProblem({ cause: error });
    throw error;
  }
}
