/** Applies the EVM engine's schema.sql to a test database (the lead folds it into a migration later). */
import { readFileSync } from 'node:fs';
import type postgres from 'postgres';

const SCHEMA = readFileSync(new URL('../../../server/adapters/chain/evm/schema.sql', import.meta.url), 'utf8');

export async function applyEvmSchema(sql: postgres.Sql): Promise<void> {
  // No parameters: one simple-protocol query may hold every statement.
  await sql.unsafe(SCHEMA);
}
