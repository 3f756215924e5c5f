/**
 * The extension table behind an attachment's default content type is loaded only for a request
 * whose attachments need it, and validation never runs without it on the send path.
 */
import { describe, expect, it } from '@jest/globals';
import { contentTypeOf, loadContentTypesFor } from '../../functions/send/content-types';

const ORG = '2f6c5a9e-8d1b-4c3a-9e7f-1a2b3c4d5e6f';
const body = (attachments?: unknown) => ({ OrganizationId: ORG, Messages: [{ To: ['a@example.com'] }, { To: ['b@example.com'], ...(attachments !== undefined && { Attachments: attachments }) }] });

describe('loadContentTypesFor', () => {
  it('leaves the table unloaded for requests whose attachments all name their type, or that have none, then loads it for one that does not', async () => {
    for (const given of [body(), body([{ FileName: 'a.pdf', Content: 'AAAA', ContentType: 'application/pdf' }]), { Messages: 'not a list' }, null, 'text']) {
      await loadContentTypesFor(given);
      expect(() => contentTypeOf('a.pdf')).toThrow(/not loaded/);
    }
    await loadContentTypesFor(body([{ FileName: 'a.pdf', Content: 'AAAA', ContentType: 'application/pdf' }, { FileName: 'b.png', Content: 'AAAA' }]));
    expect(contentTypeOf('b.png')).toBe('image/png');
    expect(contentTypeOf('invoice.PDF')).toBe('application/pdf');
    expect(contentTypeOf('blob')).toBe('application/octet-stream');
  });
});
