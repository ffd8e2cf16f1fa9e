/**
 * Files Kassa ships beside its code (the migrations, the widget build),
 * located from the project root: the nearest folder up from this module
 * holding Kassa's package.json. So the same code finds them when it runs
 * from server/ (tsx, tests) and from dist/server/ (the bundle `npm start`
 * runs), whatever the working directory.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'kassa') return dir;
    if (dirname(dir) === dir) throw new Error(`Kassa's package.json not found above ${from}`);
  }
}

export const PROJECT_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

export const projectPath = (...segments: string[]) => join(PROJECT_ROOT, ...segments);
