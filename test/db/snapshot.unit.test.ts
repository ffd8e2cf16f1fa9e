/**
 * db/schema.ts and the migrations agree: the last drizzle snapshot is the
 * schema as written, and the snapshots form one chain, so `npm run
 * db:generate` writes the next migration from a schema change (and nothing
 * when there is none).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api';
import { describe, expect, it } from 'vitest';
import * as schema from '../../db/schema.js';

const META = 'db/migrations/meta';
type Snapshot = { id: string; prevId: string };
const journal = JSON.parse(readFileSync(`${META}/_journal.json`, 'utf8')) as { entries: { idx: number; tag: string }[] };
const snapshots = readdirSync(META)
  .filter((name) => /^\d{4}_snapshot\.json$/.test(name))
  .sort()
  .map((name) => JSON.parse(readFileSync(`${META}/${name}`, 'utf8')) as Snapshot);

describe('drizzle snapshots', () => {
  it('one per journal entry, each pointing at the one before', () => {
    expect(snapshots).toHaveLength(journal.entries.length);
    snapshots.forEach((snapshot, i) => expect(snapshot.prevId, `snapshot ${i}`).toBe(i === 0 ? '00000000-0000-0000-0000-000000000000' : snapshots[i - 1]!.id));
  });

  it('the last one is db/schema.ts: generating a migration from it yields no statement', async () => {
    const last = snapshots.at(-1)!;
    const current = generateDrizzleJson(schema as Record<string, unknown>, last.id);
    expect(await generateMigration(last as never, current)).toEqual([]);
  });
});
