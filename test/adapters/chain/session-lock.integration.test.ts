/**
 * One pass per network at a time (server/adapters/chain/session-lock.ts), on a real PostgreSQL: the
 * lock serialises, and taking a connection for it never hangs where postgres.js's bare reserve()
 * does (porsager/postgres#1195: a pooled connection closing as it is reserved; Kassa's pools close
 * idle connections after 60 s, the signer's pass runs every 60 s). The pool here idles out after 1 s
 * and each reserve comes about 1 s after the last query, to meet that close.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserveConnection, withSessionLock } from '../../../server/adapters/chain/session-lock.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('withSessionLock', () => {
  it('runs one pass at a time: a second one meanwhile returns null at once; the lock is free after, even when a pass throws', async () => {
    let release!: () => void;
    let holding!: () => void;
    // The first pass runs (so holds the lock) before the second is asked: awaited, not slept for, since
    // under the full suite's load 200 ms once passed before the first pass had the lock.
    const running = new Promise<void>((r) => (holding = r));
    const first = withSessionLock(db.sql, 'test-lock', () =>
      new Promise<string>((r) => {
        release = () => r('first');
        holding();
      }),
    );
    await running;
    expect(await withSessionLock(db.sql, 'test-lock', async () => 'second')).toBeNull();
    release();
    expect(await first).toBe('first');
    await expect(withSessionLock(db.sql, 'test-lock', async () => Promise.reject(new Error('pass failed')))).rejects.toThrow('pass failed');
    expect(await withSessionLock(db.sql, 'test-lock', async () => 'third')).toBe('third');
  });
});

describe('reserveConnection', () => {
  it('takes a connection whenever it is asked, also as the pool closes its idle ones (where a bare reserve() is stranded)', async () => {
    const sql = postgres(db.url, { max: 10, idle_timeout: 1, onnotice: () => {} });
    const rounds = 8;
    let stranded = 0;
    /** Two connections busy, then idle for about the pool's idle timeout: they close as the reserve comes. */
    const idleOut = async (i: number) => {
      await Promise.all([sql`select 1`, sql`select 2`]);
      await sleep(990 + ((i * 7) % 30));
    };
    try {
      for (let i = 0; i < rounds; i++) {
        // The control: a bare reserve(), given 2 s.
        await idleOut(i);
        const bare = sql.reserve();
        const got = await Promise.race([bare, sleep(2000).then(() => null)]);
        if (got) got.release();
        else {
          stranded++;
          bare.then((late) => late.release(), () => {});
        }
        // The helper, at the same moment of the idle timers.
        await idleOut(i);
        const reserved = await reserveConnection(sql, 2000);
        expect(await reserved`select 2 as n`).toEqual([{ n: 2 }]);
        reserved.release();
      }
    } finally {
      console.log(`[session-lock] bare reserve() stranded ${stranded} of ${rounds} times; reserveConnection none`);
      await sql.end({ timeout: 1 });
    }
  }, 90_000);
});
