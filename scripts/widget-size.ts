/**
 * The widget's weight as browsers download it: the gzip (and brotli) size of
 * dist/widget/crypto-checkout.js, the module every checkout loads, against
 * its 25 kB gzip budget (25,000 bytes at gzip level 9, as Kassa serves
 * it), and of each language chunk (one is fetched for a non-English
 * checkout). `--breakdown` rebuilds the module with each library
 * left out to show what Lit, the tRPC client and the QR encoder (lean-qr) cost.
 *
 *   npm run build:widget && npx tsx scripts/widget-size.ts [--breakdown]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, gzipSync } from 'node:zlib';

const DIR = fileURLToPath(new URL('../dist/widget/', import.meta.url));
const ENTRY = 'crypto-checkout.js';
/** 25 kB, in the kilobytes of 1,000 bytes Vite's build log prints (which measures at a lower gzip level, so it shows a little more). */
export const BUDGET_GZIP_BYTES = 25_000;

const gzip = (b: Buffer | string) => gzipSync(b, { level: 9 }).length;
const brotli = (b: Buffer | string) => brotliCompressSync(b).length;
const kb = (n: number) => `${(n / 1000).toFixed(2)} kB`;

export function widgetSizes(dir = DIR) {
  const files = readdirSync(dir).filter((n) => n.endsWith('.js'));
  if (!files.includes(ENTRY)) throw new Error(`${join(dir, ENTRY)} is missing: run npm run build:widget`);
  const measure = (name: string) => {
    const body = readFileSync(join(dir, name));
    return { name, raw: body.length, gzip: gzip(body), brotli: brotli(body) };
  };
  return { entry: measure(ENTRY), chunks: files.filter((n) => n !== ENTRY).sort().map(measure) };
}

async function breakdown(): Promise<void> {
  const { build } = await import('vite');
  const sizeWithout = async (external: (string | RegExp)[]) => {
    const out = (await build({ logLevel: 'silent', build: { write: false, rolldownOptions: { external } } })) as unknown;
    const result = (Array.isArray(out) ? out[0] : out) as { output: { fileName: string; code?: string }[] };
    return gzip(result.output.find((c) => c.fileName === ENTRY)!.code!);
  };
  const libs: [string, (string | RegExp)[]][] = [
    ['lit', [/^lit/, /^@lit\//]],
    ['@trpc/client (+ @trpc/server parts it imports)', [/^@trpc\//]],
    ['lean-qr/nano', [/^lean-qr/]],
  ];
  const all = await sizeWithout([]);
  console.log(`\nbreakdown of ${ENTRY} (gzip, each library measured by leaving it out):`);
  for (const [name, external] of libs) console.log(`  ${name.padEnd(48)} ${kb(all - (await sizeWithout(external)))}`);
  console.log(`  ${'widget code, styles and English strings'.padEnd(48)} ${kb(await sizeWithout(libs.flatMap(([, e]) => e)))}`);
}

const sizes = widgetSizes();
const { entry } = sizes;
const verdict = entry.gzip <= BUDGET_GZIP_BYTES ? 'within' : 'OVER';
console.log(`${ENTRY}: ${kb(entry.raw)} raw, ${kb(entry.gzip)} gzip, ${kb(entry.brotli)} brotli — ${verdict} the ${kb(BUDGET_GZIP_BYTES)} gzip budget (${entry.gzip} bytes)`);
for (const c of sizes.chunks) console.log(`  ${c.name.padEnd(28)} ${kb(c.gzip)} gzip`);
const largest = Math.max(0, ...sizes.chunks.map((c) => c.gzip));
console.log(`worst case for one checkout (module + largest language chunk): ${kb(entry.gzip + largest)} gzip`);
if (process.argv.includes('--breakdown')) await breakdown();
