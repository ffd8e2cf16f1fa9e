/**
 * `npm run build:server`: the server as one ES module, dist/server/main.js (what `npm start` runs).
 * Packages stay in node_modules (imported at run time) except BUNDLED: those are compiled in, so
 * only what Kassa calls of them is loaded. viem and libauth whole cost ~45 MiB of resident memory
 * at start; the few functions a sandbox or live process uses of them cost a fraction (bench
 * scenario 5, idle RSS).
 */
import { build } from 'esbuild';

const BUNDLED = ['viem', '@bitauth/libauth'];
const bundled = (path) => BUNDLED.some((name) => path === name || path.startsWith(`${name}/`));

await build({
  entryPoints: ['server/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outfile: 'dist/server/main.js',
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
