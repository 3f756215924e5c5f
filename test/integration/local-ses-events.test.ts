/**
 * The local SES front feeds the mailbox simulator, which records events (and so suppressions)
 * against the Organization a message's tags name. Only the service's own sends may feed it
 * (security audit round 2, finding 6): an unauthenticated call to the local SES endpoint is
 * still answered as the emulator answers it, but makes no events.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SendEmailCommand } from '@aws-sdk/client-sesv2';
import { createSesClient } from '../../functions/shared/runtime/clients';
import { startLocalSes } from '../../infra/local/ses-rate-gate';

const ORG = '5f0c7c2e-8d1c-4a55-9a8e-0c3f5e2b9a10';
const sent: Buffer[] = [];
let ses: Awaited<ReturnType<typeof startLocalSes>>;

beforeAll(async () => {
  ses = await startLocalSes({ port: 0, onSent: (request) => sent.push(request) });
});
afterAll(() => ses.close());

const email = (to: string) => ({
  FromEmailAddress: 'noreply@example.com',
  Destination: { ToAddresses: [to] },
  Content: { Simple: { Subject: { Data: 's' }, Body: { Text: { Data: 't' } } } },
  EmailTags: [{ Name: 'OrganizationId', Value: ORG }],
});

describe('the local SES front and the mailbox simulator', () => {
  it('makes no events for a SendEmail that did not come from the service, though the emulator takes it', async () => {
    sent.length = 0;
    const response = await fetch(`${ses.endpoint}/v2/email/outbound-emails`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/ses/aws4_request' },
      body: JSON.stringify(email('bounce@simulator.amazonses.com')),
    });
    expect(response.status).toBe(200);
    expect(sent).toEqual([]);
  });

  it('makes events for the service\'s own sends, through the SES client the send function builds', async () => {
    sent.length = 0;
    const client = createSesClient({ region: 'us-east-1', sesEndpoint: ses.endpoint }, { credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, instrument: ses.ownSends });
    await client.send(new SendEmailCommand(email('success@simulator.amazonses.com')));
    client.destroy();
    expect(sent).toHaveLength(1);
    // The secret that marks the service's sends goes no further than the front.
    expect(sent[0]!.toString('utf8')).not.toContain('x-local');
  });
});
