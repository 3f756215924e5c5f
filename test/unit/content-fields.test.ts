/**
 * The section 12 rules (ReplyTo, Headers, Tags, Attachments) are loaded only for a request that
 * has one of those fields, and validation never meets such a field without them on the send path.
 */
import { describe, expect, it } from '@jest/globals';
import { loadMessageContentFor, validateMessageContent } from '../../functions/send/content-fields';
import { ProblemList } from '../../functions/shared/http/body-rules';

const ORG = '2f6c5a9e-8d1b-4c3a-9e7f-1a2b3c4d5e6f';
const plain = { To: ['a@example.com'], From: 'noreply@example.com', Subject: 'Hi', TextContent: 'Hi.' };
const body = (...messages: unknown[]) => ({ OrganizationId: ORG, Messages: messages });

describe('loadMessageContentFor', () => {
  it('leaves the rules unloaded for requests without the fields (or with them null), then loads them for one that has one', async () => {
    const problems = new ProblemList();
    for (const given of [body(plain), body(plain, { ...plain, ReplyTo: null, Headers: null, Tags: null, Attachments: null }), body('not a message', 7), { Messages: 'not a list' }, null, 'text']) {
      await loadMessageContentFor(given);
      // A message without them needs no rules; one with them is never validated without them.
      expect(validateMessageContent({ ...plain, Tags: null }, '/Messages/0', problems)).toEqual({});
      expect(() => validateMessageContent({ ...plain, Tags: { team: 'billing' } }, '/Messages/0', problems)).toThrow(/not loaded/);
    }
    // Inherited properties are not fields the body has.
    await loadMessageContentFor(body(Object.create({ Tags: { team: 'billing' } })));
    expect(() => validateMessageContent({ ...plain, Tags: { team: 'billing' } }, '/Messages/0', problems)).toThrow(/not loaded/);

    await loadMessageContentFor(body(plain, { ...plain, Tags: { team: 'billing' } }));
    expect(validateMessageContent({ ...plain, Tags: { team: 'billing' }, ReplyTo: ['help@example.com'] }, '/Messages/1', problems)).toEqual({ tags: { team: 'billing' }, replyTo: ['help@example.com'] });
    expect(problems.count).toBe(0);
  });
});
