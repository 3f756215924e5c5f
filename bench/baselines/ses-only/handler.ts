import { SESv2Client } from '@aws-sdk/client-sesv2';

const client = new SESv2Client({});
export const handler = async () => ({ statusCode: 200, body: String(typeof client.send) });
