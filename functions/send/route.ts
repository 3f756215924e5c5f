/**
 * Where the send function answers (see functions/shared/http/api-routes.ts). Free of side
 * effects, so the CDK stack, the local gateway and the tests can import the path without wiring
 * AWS clients (which `index.ts` does on load).
 */
import { API_ROUTES } from '../shared/http/api-routes';

export const SEND_PATH = API_ROUTES.send.path;
export const SEND_METHODS = API_ROUTES.send.methods;
