/** A promise bounded in time (platform/with-timeout.ts): its own outcome when in time, the given error after. */
import { describe, expect, it } from 'vitest';
import { withTimeout } from '../../server/platform/with-timeout.js';

describe('withTimeout', () => {
  it('settles as the promise does when it settles in time: its value, or its own error', async () => {
    await expect(withTimeout(Promise.resolve(7), 1000, () => new Error('late'))).resolves.toBe(7);
    await expect(withTimeout(Promise.reject(new Error('own')), 1000, () => new Error('late'))).rejects.toThrow('own');
  });

  it('rejects with the error made for it once the time is up, for a promise that never settles', async () => {
    class Late extends Error {}
    const never = new Promise<number>(() => {});
    await expect(withTimeout(never, 20, () => new Late('no answer in 20 ms'))).rejects.toBeInstanceOf(Late);
  });
});
