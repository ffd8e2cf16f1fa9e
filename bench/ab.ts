/**
 * Two builds of Kassa (or one build with two sets of node flags) compared on the create, the
 * scenario whose rate drifts most on a shared machine: both run at once against one database and
 * take turns at full speed, A B then B A, so that a drift of the machine's speed weighs on both
 * alike (on this 2-vCPU machine one 5 s phase's rate differs from the next by up to ±15%, more than
 * most changes). Every round reports creates per second, Kassa's and PostgreSQL's CPU per create,
 * and, with `paceRate`, the p99 of creates at that fixed rate. `npm run bench:ab` is its command
 * line (bench/ab-run.ts).
 *
 * Both builds use the database as this checkout migrates it: a base whose schema differs in what
 * the create writes is not comparable here.
 */
import { randomBytes } from 'node:crypto';
import { connect } from '../db/client.js';
import { createBenchBusiness, signedCreates } from './context.js';
import { Cleanup, openBenchDatabase, postgresCpuMeter, processCpuMeter, startKassa, type KassaProcess } from './env.js';
import { runHttpClosedLoop, runPaced } from './load.js';
import { mean } from './stats.js';

export type AbSide = 'A' | 'B';

export type AbRound = {
  round: number;
  side: AbSide;
  /** Creates answered 2xx per second. */
  rps: number;
  /** CPU (user + system) per create: the side's Kassa process, and the database server's (null off Linux or on a remote server). */
  kassaCpuMs: number | null;
  postgresCpuMs: number | null;
  /** Creates answered 2xx, full speed and paced together. */
  creates: number;
  /** Non-2xx answers and socket errors, full speed and paced together. */
  errors: number;
  /** p99 of the paced creates, with `paceRate`. */
  pacedP99Ms: number | null;
};

export type AbSideSummary = { rps: number; kassaCpuMs: number | null; postgresCpuMs: number | null; pacedP99Ms: number | null; errors: number };

export type AbSummary = {
  A: AbSideSummary;
  B: AbSideSummary;
  /** B's mean rate over A's. */
  rpsRatio: number;
  /** Rounds in which B answered more creates a second than A, of `rounds`. */
  bFaster: number;
  rounds: number;
};

export type AbOptions = {
  /** The checkout whose dist/ is A (built). */
  rootA: string;
  /** The checkout whose dist/ is B (built). */
  rootB: string;
  nodeArgs?: { A?: string[]; B?: string[] };
  rounds: number;
  durationS: number;
  /** Unmeasured full load of each side before the first round (a fresh process's JIT climbs for ~10 s). */
  warmupS: number;
  connections: number;
  /** Creates a second for a paced phase after each full-speed one; none when undefined. */
  paceRate?: number;
  /** Use this database as it is; otherwise an embedded PostgreSQL in a temporary directory. */
  databaseUrl?: string;
  log?: (line: string) => void;
  /** Receives the run's Cleanup at once, so a signal handler can stop what was started so far. */
  onCleanup?: (cleanup: Cleanup) => void;
  /** Called with each side's Kassa once it is ready. */
  onStarted?: (side: AbSide, kassa: KassaProcess) => void;
};

/** The means of each side and how many rounds B won; a round without both sides counts among `rounds` but is not won. */
export function summarizeAb(rounds: readonly AbRound[]): AbSummary {
  const side = (name: AbSide): AbSideSummary => {
    const mine = rounds.filter((r) => r.side === name);
    const meanOf = (values: (number | null)[]) => mean(values.filter((v): v is number => v !== null));
    return {
      rps: mean(mine.map((r) => r.rps)) ?? 0,
      kassaCpuMs: meanOf(mine.map((r) => r.kassaCpuMs)),
      postgresCpuMs: meanOf(mine.map((r) => r.postgresCpuMs)),
      pacedP99Ms: meanOf(mine.map((r) => r.pacedP99Ms)),
      errors: mine.reduce((sum, r) => sum + r.errors, 0),
    };
  };
  const indices = [...new Set(rounds.map((r) => r.round))];
  let bFaster = 0;
  for (const index of indices) {
    const a = rounds.find((r) => r.round === index && r.side === 'A');
    const b = rounds.find((r) => r.round === index && r.side === 'B');
    if (a && b && b.rps > a.rps) bFaster++;
  }
  const A = side('A');
  const B = side('B');
  return { A, B, rpsRatio: A.rps ? B.rps / A.rps : 0, bFaster, rounds: indices.length };
}

/** The order of the sides in a round: A B, then B A, so a steady drift favours neither. */
export const sidesOfRound = (round: number): [AbSide, AbSide] => (round % 2 === 0 ? ['A', 'B'] : ['B', 'A']);

/** Refuses a round count that would let one side go first more often (`name`: how the caller calls it). */
export function assertEvenRounds(rounds: number, name = 'rounds'): void {
  if (!Number.isInteger(rounds) || rounds < 2 || rounds % 2 !== 0) throw new Error(`${name} must be even (A B, then B A), not ${rounds}`);
}

export async function runAb(options: AbOptions): Promise<{ rounds: AbRound[]; summary: AbSummary }> {
  assertEvenRounds(options.rounds);
  const log = options.log ?? (() => {});
  const cleanup = new Cleanup();
  options.onCleanup?.(cleanup);
  try {
    log('starting PostgreSQL and migrating');
    const db = await openBenchDatabase(cleanup, options.databaseUrl ? { databaseUrl: options.databaseUrl } : {});
    const database = connect(db.url, { max: 2 });
    cleanup.add('bench pool', () => database.close());
    const { masterKeyHex, business } = await createBenchBusiness(database, 'A/B shop');
    const build = signedCreates(business, `ab-${randomBytes(4).toString('hex')}`);
    const target = (kassa: KassaProcess, durationS: number) => ({ url: kassa.url, method: 'POST', path: '/v1/payments', connections: options.connections, durationS, build }) as const;

    const kassas = {} as Record<AbSide, KassaProcess>;
    for (const [name, root] of [['A', options.rootA], ['B', options.rootB]] as const) {
      const nodeArgs = options.nodeArgs?.[name] ?? [];
      log(`starting ${name}: ${root}${nodeArgs.length ? ` with ${nodeArgs.join(' ')}` : ''}`);
      kassas[name] = await startKassa(cleanup, db.url, { KASSA_MASTER_KEY: masterKeyHex }, { root, nodeArgs });
      options.onStarted?.(name, kassas[name]);
    }
    if (options.warmupS > 0) {
      for (const name of ['A', 'B'] as const) {
        log(`${name} warm-up ${options.warmupS} s`);
        await runHttpClosedLoop(target(kassas[name], options.warmupS));
      }
    }

    const rounds: AbRound[] = [];
    for (let round = 0; round < options.rounds; round++) {
      for (const side of sidesOfRound(round)) {
        const kassa = kassas[side];
        const kassaCpu = processCpuMeter(kassa.pid);
        const postgresCpu = postgresCpuMeter(db.url);
        const full = await runHttpClosedLoop(target(kassa, options.durationS));
        // The full-speed phase's CPU, read before any paced phase adds to it.
        const kassaCpuMs = kassaCpu(full.ok);
        const postgresCpuMs = postgresCpu(full.ok);
        const paced = options.paceRate ? await runPaced({ ...target(kassa, options.durationS), rate: options.paceRate }) : null;
        const result: AbRound = {
          round,
          side,
          rps: full.rps,
          creates: full.ok + (paced?.ok ?? 0),
          kassaCpuMs,
          postgresCpuMs,
          errors: full.errors + (paced?.errors ?? 0),
          pacedP99Ms: paced ? paced.p99 : null,
        };
        rounds.push(result);
        log(formatRound(result));
      }
    }
    return { rounds, summary: summarizeAb(rounds) };
  } finally {
    await cleanup.runAll(log);
  }
}

const ms = (value: number | null) => (value === null ? '—' : value.toFixed(3));

/** What a round or a side's means measured, in the words both print. */
function measured(m: Pick<AbRound, 'rps' | 'kassaCpuMs' | 'postgresCpuMs' | 'pacedP99Ms'>): string {
  const paced = m.pacedP99Ms === null ? '' : `, paced p99 ${m.pacedP99Ms.toFixed(1)} ms`;
  return `${Math.round(m.rps).toLocaleString('en-US')} creates/s, CPU per create Kassa ${ms(m.kassaCpuMs)} ms, PostgreSQL ${ms(m.postgresCpuMs)} ms${paced}`;
}

export function formatRound(r: AbRound): string {
  return `round ${r.round + 1} ${r.side}: ${measured(r)}${r.errors ? `, ${r.errors} errors` : ''}`;
}

export function formatSummary(s: AbSummary): string {
  const line = (name: AbSide) => `${name}: ${measured(s[name])}, ${s[name].errors} errors`;
  return [line('A'), line('B'), `B/A ${s.rpsRatio.toFixed(3)}; B faster in ${s.bFaster} of ${s.rounds} rounds`].join('\n');
}
