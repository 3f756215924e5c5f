/** The problems `validateSendRequest` finds in a body, for tests that read them one by one. */
import { validateSendRequest } from '../../functions/send/validation';
import { ValidationProblem } from '../../functions/shared/http/problems';

export function problemsOf(body: unknown, limits: Parameters<typeof validateSendRequest>[1]): { pointer: string; detail: string }[] {
  try {
    validateSendRequest(body, limits);
  } catch (error) {
    if (error instanceof ValidationProblem) return [...(error.errors ?? [])];
    throw error;
  }
  throw new Error('expected a ValidationProblem');
}
