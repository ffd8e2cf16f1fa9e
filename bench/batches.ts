/**
 * The batched statements of the Kassa child during a phase, from its /metrics (platform/batch.ts:
 * `kassa_db_batch_items`, `_seconds`, `_held_seconds`): how many items a statement carried, its
 * round trip, and how long a gathered batch waited for an in-flight one. Scraped before and after
 * the phase; the difference is the phase's. The bench runs Kassa on loopback, which /metrics
 * answers without a token.
 */
import { makeRow, type Row } from './report.js';

type Sums = Record<string, { sum: number; count: number }>;

/** `<series>|<batch>` → its sum and count, for the three batch histograms. */
export async function scrapeBatches(kassaUrl: string): Promise<Sums> {
  const text = await (await fetch(`${kassaUrl}/metrics`)).text();
  const sums: Sums = {};
  for (const line of text.split('\n')) {
    const m = /^kassa_db_batch_(items|seconds|held_seconds)_(sum|count)\{batch="([a-z_]+)"\} (\S+)$/.exec(line);
    if (!m) continue;
    const entry = (sums[`${m[1]}|${m[3]}`] ??= { sum: 0, count: 0 });
    entry[m[2] as 'sum' | 'count'] = Number(m[4]);
  }
  return sums;
}

/** The phase's mean of one series of one batcher, or null when it sent no statement. */
function mean(before: Sums, after: Sums, series: string, batch: string): number | null {
  const a = after[`${series}|${batch}`];
  const b = before[`${series}|${batch}`] ?? { sum: 0, count: 0 };
  if (!a || a.count - b.count <= 0) return null;
  return (a.sum - b.sum) / (a.count - b.count);
}

/** Three rows: mean items per statement, mean round trip and mean time held (ms), for `batch` in the phase. */
export function batchRows(scenario: string, what: string, batch: string, before: Sums, after: Sums, latencyP50: number | null): Row[] {
  const ms = (s: number | null) => (s === null ? null : s * 1000);
  return [
    makeRow({ scenario, name: `${what}: items per batched statement (mean)`, metric: `kassa_db_batch_items{batch="${batch}"}, this phase`, unit: 'items', kassa: mean(before, after, 'items', batch), digits: 2 }),
    makeRow({ scenario, name: `${what}: round trip of a batched statement (mean)`, metric: `kassa_db_batch_seconds{batch="${batch}"}, this phase`, unit: 'ms', kassa: ms(mean(before, after, 'seconds', batch)), digits: 3,
      note: `against the request's own p50 latency (${latencyP50 === null ? '—' : latencyP50.toFixed(2)} ms, seen by the load generator): what of a request's time is its batch at the database` }),
    makeRow({ scenario, name: `${what}: batch held behind an in-flight one (mean)`, metric: `kassa_db_batch_held_seconds{batch="${batch}"}, this phase`, unit: 'ms', kassa: ms(mean(before, after, 'held_seconds', batch)), digits: 3 }),
  ];
}
