/**
 * What `node dist/server/main.js` (npm start) evaluates at start: main.js and the chunks it imports
 * statically, not the chunks behind a dynamic import(). BCH signing's libauth WebAssembly instances
 * (~9 MiB resident) must stay behind one (scripts/build-server.mjs, utxo/cash-address.rules.ts).
 * `npm test` builds first (pretest), so the bundle is the one of this tree.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const MAIN = resolve('dist/server/main.js');
const CLI = resolve('dist/server/cli.js');
const STATIC = /^(?:import\s*(?:\{[^}]*\}\s*from\s*)?|\}\s*from\s*)"(\.\/[^"]+)";$/gm;
const DYNAMIC = /import\("(\.\/[^"]+)"\)/g;
// libauth's module that instantiates its WebAssembly hashes and curve at the top level.
const WASM_AT_TOP = /await Promise\.all\(\[\s*instantiateSha1\(\)/;

/** Files reached from `file` by static imports, `file` included. */
function staticGraph(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const [, spec] of readFileSync(file, 'utf8').matchAll(STATIC)) staticGraph(join(dirname(file), spec!), seen);
  return seen;
}

describe('the server bundle (npm test builds it first; npm run build for this file alone)', () => {
  it('evaluates no libauth WebAssembly at start; the BCH signing chunk it imports on demand does', () => {
    const atStart = staticGraph(MAIN);
    expect(atStart.size).toBeGreaterThan(1);
    for (const file of atStart) expect(WASM_AT_TOP.test(readFileSync(file, 'utf8')), file).toBe(false);
    // Nor does the CLI's bundle (npm run kassa), which shares main.js's chunks.
    for (const file of staticGraph(CLI)) expect(WASM_AT_TOP.test(readFileSync(file, 'utf8')), file).toBe(false);

    // main.js shares its code with cli.js through chunks: the import() may be in any of them.
    const lazy = [...atStart].flatMap((file) => [...readFileSync(file, 'utf8').matchAll(DYNAMIC)].map(([, spec]) => join(dirname(file), spec!)));
    const bch = lazy.find((file) => /\/bch-[A-Z0-9]+\.js$/.test(file));
    expect(bch, `dynamic imports: ${lazy.join(', ')}`).toBeDefined();
    const behindIt = [...staticGraph(bch!)].filter((file) => !atStart.has(file));
    expect(behindIt.some((file) => WASM_AT_TOP.test(readFileSync(file, 'utf8')))).toBe(true);
  });

  it('holds no character beyond Latin-1, so V8 keeps each file\'s source at one byte a character', () => {
    const files = readdirSync(dirname(MAIN), { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.js'));
    expect(files.length).toBeGreaterThan(1);
    for (const name of files) {
      const wide = readFileSync(join(dirname(MAIN), name), 'utf8').match(/[^\0-\xff]/gu);
      expect(wide, name).toBeNull();
    }
    // A bundled package's comment that held 𝑊 and − (noble-curves) now spells them.
    expect([...staticGraph(MAIN)].some((file) => readFileSync(file, 'utf8').includes('\\u{1d44a}'))).toBe(true);
  });
});
