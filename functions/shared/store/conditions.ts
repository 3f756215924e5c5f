/**
 * Conditional writes, in one place: a write whose condition fails is a domain answer ("already
 * there", "changed meanwhile"), not a fault. Every other error passes through unchanged.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

/** Runs a conditional write: true when it was made, false when its condition failed. */
export async function unlessConditionFails(call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/**
 * Runs a conditional write; when its condition fails, throws the domain error `refusal` makes
 * (with the DynamoDB exception as its cause).
 */
export async function conditionally<T>(call: () => Promise<T>, refusal: (cause: ConditionalCheckFailedException) => Error | Promise<Error>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw await refusal(error);
    throw error;
  }
}
