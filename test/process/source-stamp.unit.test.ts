import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error a plain .mjs build script without types
import { buildIsCurrent, STAMP_FILE, stampOf } from '../../scripts/source-stamp.mjs';

/** `npm run kassa` runs the bundle only while it is current (scripts/kassa.mjs); the check is here. */
describe('whether a server build is current (scripts/source-stamp.mjs)', () => {
  let root: string;
  const write = (path: string, text: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const stamp = (inputs: string[]) => write(STAMP_FILE, JSON.stringify(stampOf(root, { inputs: Object.fromEntries(inputs.map((i) => [i, {}])) })));

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'kassa-stamp-'));
    write('server/cli.ts', 'cli v1');
    write('server/platform/config.ts', 'config v1');
    write('package-lock.json', '{"v":1}');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('stamps the project files the build read and the lockfile, not the packages it compiled in', () => {
    const s = stampOf(root, { inputs: { 'server/cli.ts': {}, 'node_modules/viem/_esm/index.js': {}, 'server/platform/config.ts': {} } });
    expect(s.files).toEqual(['package-lock.json', 'server/cli.ts', 'server/platform/config.ts']);
    expect(s.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is current until a file it was made from changes, disappears, or the lockfile changes', () => {
    expect(buildIsCurrent(root)).toBe(false); // no build
    stamp(['server/cli.ts', 'server/platform/config.ts']);
    expect(buildIsCurrent(root)).toBe(true);
    write('server/unrelated.ts', 'not in the build');
    expect(buildIsCurrent(root)).toBe(true);

    write('server/platform/config.ts', 'config v2');
    expect(buildIsCurrent(root)).toBe(false);
    write('server/platform/config.ts', 'config v1');
    expect(buildIsCurrent(root)).toBe(true);

    write('package-lock.json', '{"v":2}');
    expect(buildIsCurrent(root)).toBe(false);
    write('package-lock.json', '{"v":1}');

    rmSync(join(root, 'server/cli.ts'));
    expect(buildIsCurrent(root)).toBe(false);
  });

  it('a damaged stamp is not current', () => {
    write(STAMP_FILE, '{"files":');
    expect(buildIsCurrent(root)).toBe(false);
    write(STAMP_FILE, '{"files":"server/cli.ts","hash":1}');
    expect(buildIsCurrent(root)).toBe(false);
  });
});
