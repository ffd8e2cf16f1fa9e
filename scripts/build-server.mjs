/**
 * `npm run build:server`: the server as ES modules, dist/server/main.js (what `npm start` runs) and
 * the chunks it imports (dist/server/chunks/). Packages stay in node_modules (imported at run time)
 * except BUNDLED: those are compiled in, so only what Kassa calls of them is loaded. viem and libauth
 * whole cost ~45 MiB of resident memory at start; the few functions a sandbox or live process uses
 * of them cost a fraction (bench scenario 5, idle RSS). A dynamic import() in Kassa's code becomes a
 * chunk loaded when first called (splitting): BCH signing's libauth WebAssembly instances (~9 MiB)
 * stay out of every process that signs no BCH payout.
 */
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

const BUNDLED = ['viem', '@bitauth/libauth'];
const bundled = (path) => BUNDLED.some((name) => path === name || path.startsWith(`${name}/`));

// Chunk names carry a content hash: clear the old ones so dist/server holds one build.
rmSync('dist/server', { recursive: true, force: true });

await build({
  entryPoints: ['server/main.ts'],
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
