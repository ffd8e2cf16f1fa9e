import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const FLOOD = 20_000;

/** The first line a readable gives (a child's report on stderr). */
async function firstLine(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) {
    text += String(chunk);
    const end = text.indexOf('\n');
    if (end >= 0) return text.slice(0, end);
  }
  throw new Error(`stream ended without a line: ${text}`);
}

describe('the stdout log while nothing reads it (server/platform/logger.ts)', () => {
  it('drops and counts lines beyond its bound instead of keeping them, and says how many once stdout is read', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve('test/platform/fixtures/log-flood.child.ts'), String(FLOOD)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    try {
      // Not read: the pipe (64 KiB) and the stream's own buffer fill, then the child's writes wait.
      child.stdout.pause();
      const report = JSON.parse(await firstLine(child.stderr)) as { dropped: number; heapUsed: number };
      // ~270 bytes a line: a 64 KiB buffer and ~80 KiB in the pipe hold ~550 of the 20,000.
      expect(report.dropped).toBeGreaterThan(FLOOD - 2_000);
      expect(report.dropped).toBeLessThan(FLOOD);
      // 20,000 lines kept would be ~5.4 MB of strings on top of the ~10 MB a tsx process holds.
      expect(report.heapUsed).toBeLessThan(40 * 1024 * 1024);

      let out = '';
      child.stdout.on('data', (chunk) => (out += String(chunk)));
      child.stdout.resume();
      child.stdin.write('go\n');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);

      const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { msg: string; n?: number; droppedLines?: number; level: number });
      const kept = lines.filter((l) => l.msg === 'flood');
      const reports = lines.filter((l) => l.droppedLines !== undefined);
      // Every line is either written whole or counted as dropped, and the counts are said in the log itself.
      expect(kept.length + report.dropped).toBe(FLOOD);
      expect(reports.length).toBeGreaterThanOrEqual(1);
      expect(reports.reduce((sum, r) => sum + r.droppedLines!, 0)).toBe(report.dropped);
      expect(reports.every((r) => r.level === 40 && r.msg.startsWith('log lines dropped'))).toBe(true);
      // The first lines went out in order; what was dropped came after them.
      expect(kept.slice(0, 100).map((l) => l.n)).toEqual([...Array(100).keys()]);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
