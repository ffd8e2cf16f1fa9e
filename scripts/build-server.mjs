/**
 * `npm run build:server`: the server as ES modules, dist/server/main.js (what `npm start` runs),
 * dist/server/cli.js (the operator CLI, run by scripts/kassa.mjs while it is current) and the chunks
 * they import (dist/server/chunks/), with the stamp of the files they were made from
 * (source-stamp.mjs). Packages stay in node_modules (imported at run time)
 * except BUNDLED: those are compiled in, so only what Kassa calls of them is loaded. viem and libauth
 * whole cost ~45 MiB of resident memory at start; the few functions a sandbox or live process uses
 * of them cost a fraction (bench scenario 5, idle RSS). A dynamic import() in Kassa's code becomes a
 * chunk loaded when first called (splitting): BCH signing's libauth WebAssembly instances (~9 MiB)
 * stay out of every process that signs no BCH payout.
 */
import { parse } from 'acorn';
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STAMP_FILE, stampOf } from './source-stamp.mjs';

const BUNDLED = ['viem', '@bitauth/libauth'];
const bundled = (path) => BUNDLED.some((name) => path === name || path.startsWith(`${name}/`));

// Chunk names carry a content hash: clear the old ones so dist/server holds one build.
rmSync('dist/server', { recursive: true, force: true });

const { metafile } = await build({
  entryPoints: ['server/main.ts', 'server/cli.ts'],
  metafile: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outdir: 'dist/server',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  plugins: [
    {
      name: 'kassa:external-packages',
      setup(b) {
        // A bare specifier in Kassa's code (a package or node:*) stays an import unless it is one of
        // BUNDLED; inside a bundled package everything is bundled too, resolved from where it stands
        // (viem's own @noble/hashes is not the one at the top of node_modules).
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.kind === 'entry-point' || bundled(args.path) || args.importer.includes('/node_modules/')) return undefined;
          return { path: args.path, external: true };
        });
      },
    },
  ],
});

// esbuild writes code ASCII-only (its default charset escapes the rest) but keeps comments as they
// are, and a few bundled packages' comments hold characters beyond Latin-1, such as 𝑊 or −. One of
// them is enough for V8 to hold a file's whole source, which it keeps for lazy compilation, at two
// bytes a character: ~0.9 MiB more for main.js alone. So inside comments (found by parsing: a
// template literal's raw text is not esbuild's to escape, nor ours) such characters become their
// \u{…} spelling, and a build that would still hold one anywhere else fails here.
const beyondLatin1 = /[^\0-\xff]/gu;
for (const entry of readdirSync('dist/server', { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
  const file = join(entry.parentPath, entry.name);
  const text = readFileSync(file, 'utf8');
  if (text.search(beyondLatin1) < 0) continue;
  const comments = [];
  parse(text, { ecmaVersion: 'latest', sourceType: 'module', onComment: (_block, _text, start, end) => comments.push([start, end]) });
  let out = '';
  let at = 0;
  for (const [start, end] of comments) {
    out += text.slice(at, start) + text.slice(start, end).replace(beyondLatin1, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
    at = end;
  }
  out += text.slice(at);
  const left = out.match(beyondLatin1);
  if (left) throw new Error(`${file}: ${left.length} character(s) beyond Latin-1 outside comments, e.g. ${JSON.stringify(left[0])}`);
  writeFileSync(file, out);
}

// Last, so that a build that failed above leaves no stamp claiming it is current.
writeFileSync(STAMP_FILE, JSON.stringify(stampOf(process.cwd(), metafile)));
