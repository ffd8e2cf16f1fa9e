/**
 * `npm run bench [-- options]`: runs every scenario against a fresh
 * embedded PostgreSQL (or a new database on the server of DATABASE_URL),
 * writes bench/report.json (not tracked by git: the committed summary is README.md's table,
 * refreshed with --readme or --readme-only) and prints a markdown summary on stdout.
 *
 *   --readme            also write the summary into README.md (between the bench markers)
 *   --readme-only       only rewrite README.md from the existing bench/report.json
 *   --duration <s>      seconds per load phase (10)
 *   --warmup <s>        unmeasured warm-up of each contender before its first create phase (10)
 *   --paced-duration <s> seconds of each paced create phase (40)
 *   --connections <n>   concurrent connections / callers (10)
 *   --callbacks <n>     callbacks to drain (10000)
 *   --concurrency <n>   worker concurrency (Kassa's default, 12)
 *   --checkout-runs <n> page loads in Chromium (20)
 *   --scan-blocks <n>   blocks mined on anvil and scanned (1000)
 *   --only <list>       comma-separated: create,read,checkout,callbacks,scan
 *   --out <file>        report path (bench/report.json)
 *   --cpu-prof <dir>    run the Kassa child with --cpu-prof into <dir>
 *   --node-args=<flags> more node flags for the Kassa child, space-separated (--node-args="--trace-gc")
 *   --kassa-log <file>  copy the Kassa child's stdout and stderr into <file> (where --trace-gc prints)
 *
 * Progress goes to stderr; stdout carries only the table.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, stopOnSignals, type Cleanup } from './env.js';
import { runBench, SCENARIOS } from './harness.js';
import { renderMarkdown, replaceReadmeSection, type Report } from './report.js';

const { values } = parseArgs({
  options: {
    readme: { type: 'boolean', default: false },
    'readme-only': { type: 'boolean', default: false },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    'paced-duration': { type: 'string' },
    connections: { type: 'string' },
    callbacks: { type: 'string' },
    concurrency: { type: 'string' },
    'checkout-runs': { type: 'string' },
    'scan-blocks': { type: 'string' },
    only: { type: 'string' },
    out: { type: 'string', default: join(ROOT, 'bench/report.json') },
    'cpu-prof': { type: 'string' },
    'node-args': { type: 'string' },
    'kassa-log': { type: 'string' },
  },
});

const num = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not ${value}`);
  return n;
};

function readmeBody(report: Report): string {
  return renderMarkdown(report).trimEnd();
}

function writeReadme(report: Report): void {
  const file = join(ROOT, 'README.md');
  writeFileSync(file, replaceReadmeSection(readFileSync(file, 'utf8'), readmeBody(report)));
  process.stderr.write('README.md Performance section updated\n');
}

async function main(): Promise<void> {
  const out = resolve(values.out!);
  if (values['readme-only']) {
    writeReadme(JSON.parse(readFileSync(out, 'utf8')) as Report);
    return;
  }
  const only = values.only ? values.only.split(',').map((s) => s.trim()).filter(Boolean) : [];
  const unknown = only.filter((s) => !(SCENARIOS as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`--only: unknown scenario ${unknown.join(', ')} (known: ${SCENARIOS.join(', ')})`);
  const started = performance.now();
  const report = await runBench({
    durationS: num('duration', values.duration),
    warmupS: values.warmup === '0' ? 0 : num('warmup', values.warmup),
    pacedS: num('paced-duration', values['paced-duration']),
    connections: num('connections', values.connections),
    callbacks: num('callbacks', values.callbacks),
    workerConcurrency: num('concurrency', values.concurrency),
    checkoutRuns: num('checkout-runs', values['checkout-runs']),
    scanBlocks: num('scan-blocks', values['scan-blocks']),
    requireBrowser: process.env.KASSA_REQUIRE_BROWSER === '1',
    only,
    kassaNodeArgs: [
      ...(values['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', resolve(values['cpu-prof'])] : []),
      ...(values['node-args']?.split(' ').filter(Boolean) ?? []),
    ],
    ...(values['kassa-log'] ? { kassaLog: resolve(values['kassa-log']) } : {}),
    ...(process.env.DATABASE_URL ? { adminUrl: process.env.DATABASE_URL } : {}),
    onCleanup: (cleanup) => (active = cleanup),
    log: (message) => process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}\n`),
  });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(renderMarkdown(report));
  process.stderr.write(`report written to ${out}\n`);
  if (values.readme) writeReadme(report);
}

let active: Cleanup | null = null;
stopOnSignals(() => active, 'the bench');

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
