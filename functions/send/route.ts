/**
 * Where the send function answers. Free of side effects, so the CDK stack, the local gateway and
 * the tests can import the path without wiring AWS clients (which `handler.ts` does on load).
 */
export const SEND_PATH = '/v1.2/email/send';
export const SEND_METHODS = ['POST'] as const;
