/**
 * SesIdentities (infra/admin/ses-identities.ts) in AWS mode with SES's client mocked, for what no
 * emulator here answers: the Easy DKIM tokens SES gives a new domain (moto gives none) and the
 * custom MAIL FROM call (moto lacks it). The create-when-missing path against a real SES
 * emulator is in test/local/sender-identities.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  CreateEmailIdentityCommand,
  GetEmailIdentityCommand,
  NotFoundException,
  PutEmailIdentityMailFromAttributesCommand,
  SESv2Client,
} from '@aws-sdk/client-sesv2';
import type { GetEmailIdentityCommandOutput } from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import type { AwsClientStub } from 'aws-sdk-client-mock';
import { IdentityError, SesIdentities } from '../../infra/admin/ses-identities';

let ses: AwsClientStub<SESv2Client>;
beforeEach(() => {
  ses = mockClient(SESv2Client);
});
afterEach(() => ses.restore());

const identities = () => new SesIdentities(new SESv2Client({ region: 'eu-west-1' }), 'unused');
const PENDING: GetEmailIdentityCommandOutput = { IdentityType: 'DOMAIN', VerifiedForSendingStatus: false, VerificationStatus: 'PENDING', DkimAttributes: { Status: 'PENDING', Tokens: ['aaa', 'bbb', 'ccc'] }, $metadata: {} };

describe('SesIdentities (AWS)', () => {
  it('creates a missing domain with Easy DKIM and answers its DKIM CNAMEs from SES\'s tokens, and the MAIL FROM MX and SPF of the region', async () => {
    ses.on(GetEmailIdentityCommand).rejectsOnce(new NotFoundException({ message: 'none', $metadata: {} })).resolves(PENDING);
    const added = await identities().ensure('example.com', 'Bounce.Example.com');
    expect(ses.commandCalls(CreateEmailIdentityCommand).map((c) => c.args[0].input)).toEqual([{ EmailIdentity: 'example.com' }]);
    expect(ses.commandCalls(PutEmailIdentityMailFromAttributesCommand).map((c) => c.args[0].input)).toEqual([
      { EmailIdentity: 'example.com', MailFromDomain: 'bounce.example.com', BehaviorOnMxFailure: 'USE_DEFAULT_VALUE' },
    ]);
    expect(added).toEqual({
      identity: 'example.com',
      created: true,
      verified: false,
      verificationStatus: 'PENDING',
      dkimStatus: 'PENDING',
      records: [
        { name: 'aaa._domainkey.example.com', type: 'CNAME', value: 'aaa.dkim.amazonses.com' },
        { name: 'bbb._domainkey.example.com', type: 'CNAME', value: 'bbb.dkim.amazonses.com' },
        { name: 'ccc._domainkey.example.com', type: 'CNAME', value: 'ccc.dkim.amazonses.com' },
        { name: 'bounce.example.com', type: 'MX', value: '10 feedback-smtp.eu-west-1.amazonses.com' },
        { name: 'bounce.example.com', type: 'TXT', value: '"v=spf1 include:amazonses.com ~all"' },
      ],
    });
  });

  it('writes an internationalised MAIL FROM domain in Punycode, as the identity\'s own', async () => {
    ses.on(GetEmailIdentityCommand).rejectsOnce(new NotFoundException({ message: 'none', $metadata: {} })).resolves(PENDING);
    const added = await identities().ensure('xn--bcher-kva.example', 'bounce.bücher.example');
    expect(ses.commandCalls(PutEmailIdentityMailFromAttributesCommand).map((c) => c.args[0].input.MailFromDomain)).toEqual(['bounce.xn--bcher-kva.example']);
    expect(added.records.filter((record) => record.type !== 'CNAME').map((record) => record.name)).toEqual(['bounce.xn--bcher-kva.example', 'bounce.xn--bcher-kva.example']);
  });

  it('leaves an existing identity as it is, and reports its status', async () => {
    ses.on(GetEmailIdentityCommand).resolves({ ...PENDING, VerifiedForSendingStatus: true, VerificationStatus: 'SUCCESS', DkimAttributes: { Status: 'SUCCESS', Tokens: ['aaa'] } });
    expect(await identities().ensure('example.com')).toMatchObject({ created: false, verified: true, verificationStatus: 'SUCCESS', dkimStatus: 'SUCCESS' });
    expect(ses.commandCalls(CreateEmailIdentityCommand)).toHaveLength(0);
    expect(await identities().status('example.com')).toEqual({ identity: 'example.com', verified: true, verificationStatus: 'SUCCESS', dkimStatus: 'SUCCESS' });
  });

  it('turns a refusal into an IdentityError naming the call and the identity, with no MAIL FROM for an address', async () => {
    ses.on(GetEmailIdentityCommand).rejects(Object.assign(new Error('not allowed'), { name: 'AccessDeniedException' }));
    const refusal = await identities().status('example.com').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(IdentityError);
    expect((refusal as Error).message).toBe('Amazon SES refused GetEmailIdentity for example.com (AccessDeniedException: not allowed)');
    await expect(identities().ensure('a@example.com', 'bounce.example.com')).rejects.toThrow(/--mail-from goes with --domain/);
    await expect(identities().ensure('example.com', 'example.org')).rejects.toThrow(/--mail-from must be a subdomain of example\.com/);
  });
});
