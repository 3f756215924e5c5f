/** The `--scale` benchmark's per-item write counter (bench/item-writes.ts). */
import { describe, expect, it } from '@jest/globals';
import { ItemWriteCounter, itemSize } from '../../bench/item-writes';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('ItemWriteCounter', () => {
  it('counts each written item by pk and sk, across single, transactional and batch writes, and ignores reads', () => {
    const counter = new ItemWriteCounter();
    const shard = { pk: { S: 'BUDGET#ses-send-rate#1' }, sk: { S: 'BUDGET' } };
    counter.record('UpdateItem', json({ TableName: 't', Key: shard }));
    counter.record('TransactWriteItems', json({ TransactItems: [{ Update: { Key: shard } }, { Put: { Item: { pk: { S: 'MSG#1' }, sk: { S: 'M' }, body: { S: 'x'.repeat(100) } } } }, { ConditionCheck: { Key: shard } }] }));
    counter.record('BatchWriteItem', json({ RequestItems: { t: [{ DeleteRequest: { Key: shard } }] } }));
    counter.record('GetItem', json({ Key: shard }));
    counter.record('PutItem', Buffer.from('not json'));
    const { writes, largestPut } = counter.snapshot();
    expect(writes).toEqual({ 'BUDGET#ses-send-rate#1 BUDGET': 3, 'MSG#1 M': 1 });
    expect(largestPut).toEqual({ key: 'MSG#1 M', bytes: 2 + 5 + 2 + 1 + 4 + 100 });
    counter.reset();
    expect(counter.snapshot()).toEqual({ writes: {}, largestPut: undefined, calls: {} });
  });

  it('tallies answers by operation and kind of item, shards and ids folded, a non-200 counting as failed', () => {
    const counter = new ItemWriteCounter();
    const shard = (k: number) => json({ Key: { pk: { S: `BUDGET#ses-send-rate#${k}` }, sk: { S: 'BUDGET' } } });
    counter.answered('UpdateItem', shard(1), 200, 20);
    counter.answered('UpdateItem', shard(2), 400, 30);
    counter.answered('BatchGetItem', json({ RequestItems: { t: { Keys: [{ pk: { S: 'KEY#0123456789abcdef0123' } }, { pk: { S: 'KEY#x' } }] } } }), 200, 5);
    counter.answered('PutItem', Buffer.from('not json'), 200, 1);
    expect(counter.snapshot().calls).toEqual({
      'UpdateItem BUDGET#ses-send-rate#k': { calls: 2, failed: 1, ms: 50 },
      'BatchGetItem KEY#… ×2': { calls: 1, failed: 0, ms: 5 },
      'PutItem ?': { calls: 1, failed: 0, ms: 1 },
    });
  });

  it('sizes an item as DynamoDB counts it: names, strings in UTF-8, numbers by digits, binaries, maps and lists', () => {
    expect(itemSize({ é: { S: 'ab' } })).toBe(2 + 2);
    expect(itemSize({ n: { N: '12345' } })).toBe(1 + 4);
    expect(itemSize({ b: { B: Buffer.from('abcd').toString('base64') } })).toBe(1 + 4);
    expect(itemSize({ b: { B: new Uint8Array(7) } })).toBe(1 + 7);
    expect(itemSize({ m: { M: { k: { S: 'v' } } }, l: { L: [{ S: 'vv' }] } })).toBe(1 + 3 + 2 + 1 + 3 + 1 + 2);
  });
});
