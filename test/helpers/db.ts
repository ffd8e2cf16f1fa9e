/** A fresh database per test file, cloned from the migrated template. */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { connect, GENERIC_POOL_SIZE, type Database } from '../../db/client.js';

const TEMPLATE = 'kassa_template';

export type TestDatabase = Database & { name: string; drop: () => Promise<void> };

export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = inject('adminUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  // Template cloning takes a lock on the template: retry when another file is cloning at the same moment.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.unsafe(`create database ${name} template ${TEMPLATE}`);
      break;
    } catch (error) {
      if (attempt > 20) throw error;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = connect(url.toString(), { max: 10 });
  return {
    ...database,
    name,
    drop: async () => {
      await database.close();
      const a = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await a.unsafe(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

/** A prepared statement of the generic-plan pools, and how often PostgreSQL planned it each way. */
export type PreparedStatement = { statement: string; generic_plans: number; custom_plans: number };

/**
 * The generic-plan pools' prepared statements (the batch pool's and the creates' connection) whose
 * text is like `pattern`, from every connection (pg_prepared_statements is per session: each
 * connection is held and asked).
 */
export async function genericPoolPrepared(db: Database, pattern: string): Promise<PreparedStatement[]> {
  const held = await Promise.all([...Array.from({ length: GENERIC_POOL_SIZE }, () => db.generic.reserve()), db.creates.reserve()]);
  try {
    const seen = await Promise.all(held.map((c) => c.unsafe<PreparedStatement[]>(
      'select statement, generic_plans::int, custom_plans::int from pg_prepared_statements where statement like $1', [pattern])));
    return seen.flat();
  } finally {
    held.forEach((c) => c.release());
  }
}
