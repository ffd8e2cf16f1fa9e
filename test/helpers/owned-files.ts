/** Files with a chosen mode in a temporary directory removed after the suite: the signer's mnemonic-file checks. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** Call at the top of a test file: returns `file(name, content, mode)`, which writes it and gives its path. */
export function filesWithModes(prefix: string): (name: string, content: string, mode: number) => string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return (name, content, mode) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    chmodSync(path, mode);
    return path;
  };
}
