/**
 * `npm run kassa -- <command>`: the operator CLI (server/cli.ts). It runs the build's
 * dist/server/cli.js (~0.7 s a command on the 2-vCPU machine) when that build was made from the
 * files as they are now (source-stamp.mjs), and otherwise the sources themselves through tsx
 * (~3 s: tsx compiles them first), so a command never runs code older than the checkout.
 * `npm start` and `npm run build` make the build.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildIsCurrent } from './source-stamp.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

if (buildIsCurrent(ROOT)) {
  await import(pathToFileURL(join(ROOT, 'dist/server/cli.js')).href);
} else {
  const tsx = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'server/cli.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(tsx.status ?? 1);
}
