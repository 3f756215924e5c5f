import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { StorageUnavailableProblem } from '../http/problems';
import { networkFailure } from '../runtime/network-errors';


/** True for errors that mean "DynamoDB did not answer usefully", as opposed to a bug of ours. */
export function isStorageFault(error: unknown): boolean {
  if (error instanceof DynamoDBServiceException || networkFailure(error) !== undefined) return true;
  // Any other error the SDK raised for the call (it carries $metadata), such as an answer that
  // did not deserialise (a proxy's HTML page), is the store's fault too, not a bug of ours.
  return typeof error === 'object' && error !== null && '$metadata' in error;
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
