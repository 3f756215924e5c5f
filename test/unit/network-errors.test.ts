import { describe, expect, it } from '@jest/globals';
import { networkFailure } from '../../functions/shared/runtime/network-errors';

describe('networkFailure', () => {
  it.each([
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' }), 'not-connected'],
    [Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' }), 'not-connected'],
    [new Error('AWS SDK error wrapper for Error: connect ECONNREFUSED 127.0.0.1:9'), 'not-connected'],
    [Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'answer-lost'],
    [Object.assign(new Error('timed out'), { name: 'TimeoutError' }), 'answer-lost'],
    [Object.assign(new Error('aborted'), { name: 'AbortError' }), 'answer-lost'],
    [new Error('ValidationException: bad key'), undefined],
    [new Error('EXPLAINED nothing'), undefined],
    ['ECONNREFUSED', undefined],
    [null, undefined],
  ])('classifies %p as %p', (error, expected) => {
    expect(networkFailure(error)).toBe(expected);
  });
});
