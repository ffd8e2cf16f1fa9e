/** A key given twice in one JSON object is found, however it is spelled; equal keys in different objects are not duplicates. */
import { describe, expect, it } from 'vitest';
import { duplicateKey } from '../../../server/edges/rest/duplicate-keys.rules.js';

describe('duplicateKey', () => {
  it.each([
    ['{"displayAmount":"1","displayAmount":"1000"}', 'displayAmount'],
    ['{ "a" : 1 ,\n\t"a":2}', 'a'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{"x":{"b":1,"b":2}}', 'x.b'],
    ['{"list":[{"k":1},{"k":1,"k":2}]}', 'list.k'],
    ['{"q\\"":1,"q\\"":2}', 'q"'],
    ['[{"a":1},{"a":2,"b":{"c":[1,{"d":1,"d":1}]}}]', 'b.c.d'],
  ])('%s → %s', (json, key) => {
    expect(() => JSON.parse(json)).not.toThrow();
    expect(duplicateKey(json)).toBe(key);
  });

  it.each([
    '{"a":1,"b":2}',
    '{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}',
    '{"a":"\\"a\\":1","b":"a"}',
    '{"a\\\\":1,"a":2}',
    '{"a":"x:y","x":"a"}',
    '"a"',
    '[1,"a","a"]',
    '{}',
  ])('%s has none', (json) => {
    expect(() => JSON.parse(json)).not.toThrow();
    expect(duplicateKey(json)).toBeNull();
  });
});
