/**
 * The README and ARCHITECTURE.md name files a reader opens next (the table of what is tested where,
 * the map of the folders). A file moved without its mention is a dead end for that reader: every
 * literal path they name in backticks must exist. Globs and placeholders (`*`, `<m>`, `#symbol`) are
 * patterns, not files, and are left out, as are the outputs `.gitignore` names (a fresh clone has none).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const TOP = ['server', 'db', 'jobs', 'widget', 'test', 'bench', 'scripts', 'soak', 'docs'];

/** Literal repository paths in backticks, e.g. `test/modules/payments/x.test.ts` or `server/cli.ts`. */
export function pathsIn(markdown: string): string[] {
  const found = new Set<string>();
  for (const [, path] of markdown.matchAll(/`([^`\s]+)`/g)) {
    if (!TOP.some((top) => path!.startsWith(`${top}/`))) continue;
    if (/[*<>#]/.test(path!)) continue;
    found.add(path!.replace(/[.,:;]+$/, ''));
  }
  return [...found].sort();
}

describe('paths named in the docs', () => {
  it('finds literal paths and leaves patterns out', () => {
    expect(pathsIn('see `server/cli.ts`, `test/a/b.test.ts` and `server/edges/rest/*-routes.ts`, `server/modules/<m>/`, `npm test`')).toEqual([
      'server/cli.ts',
      'test/a/b.test.ts',
    ]);
  });

  it.each(['README.md', 'ARCHITECTURE.md'])('every file %s names exists', (doc) => {
    // What a command writes where git does not track it (bench/report.json) is named before it exists.
    const generated = new Set(readFileSync(resolve(ROOT, '.gitignore'), 'utf8').split('\n').map((line) => line.trim()));
    const paths = pathsIn(readFileSync(resolve(ROOT, doc), 'utf8')).filter((p) => !generated.has(p));
    expect(paths.length).toBeGreaterThan(5);
    expect(paths.filter((p) => !existsSync(resolve(ROOT, p)))).toEqual([]);
  });
});
