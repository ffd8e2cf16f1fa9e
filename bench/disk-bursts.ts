/**
 * What the disk did while a phase ran: /proc/diskstats (Linux) sampled every 50 ms, a burst being a
 * sample in which the machine's disks wrote at least 8 MiB. In the eighteenth round
 * (docs/performance-history.md) the paced create's slow requests came in windows of 50–250 ms that
 * followed such bursts: a fresh cluster creating its next 16 MB WAL segment (zero-filled and fsynced
 * by the committing backend) and the kernel writing back tens of MB of data-file pages, while one
 * 8 KB fdatasync took ~50 ms. The report counts them beside the tail, so that a run's p99 can be read
 * against its disk.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** /proc/diskstats counts 512-byte sectors, whatever the device's own sector size. */
const SECTOR_BYTES = 512;
export const BURST_BYTES = 8 * 1024 * 1024;
const EVERY_MS = 50;
/** How long after a burst a request due then still waits behind the commits it held up. */
export const AFTER_BURST_MS = 250;

export type DiskSample = { atMs: number; bytes: number };
/** An interval of one sample (`fromMs` to `toMs`, performance.now()) in which `bytes` were written. */
export type Burst = { fromMs: number; toMs: number; bytes: number };

/** Bytes written so far by the named disks, from the text of /proc/diskstats (its 10th field: sectors written). */
export function bytesWritten(diskstats: string, disks: ReadonlySet<string>): number {
  let sectors = 0;
  for (const line of diskstats.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length > 9 && disks.has(fields[2]!)) sectors += Number(fields[9]);
  }
  return sectors * SECTOR_BYTES;
}

/** The intervals between consecutive samples that wrote at least `minBytes`. */
export function burstsOf(samples: readonly DiskSample[], minBytes = BURST_BYTES): Burst[] {
  const bursts: Burst[] = [];
  for (let i = 1; i < samples.length; i++) {
    const bytes = samples[i]!.bytes - samples[i - 1]!.bytes;
    if (bytes >= minBytes) bursts.push({ fromMs: samples[i - 1]!.atMs, toMs: samples[i]!.atMs, bytes });
  }
  return bursts;
}

/** How many of the moments `at` (performance.now()) fall in a burst or in the `afterMs` that follow it. */
export function nearBursts(at: readonly number[], bursts: readonly Burst[], afterMs = AFTER_BURST_MS): number {
  return at.filter((t) => bursts.some((b) => t >= b.fromMs && t <= b.toMs + afterMs)).length;
}

/** Whole disks: the devices under /sys/block, without loop and RAM devices. Partitions are not listed there. */
function wholeDisks(): Set<string> {
  try {
    return new Set(readdirSync('/sys/block').filter((name) => !/^(loop|ram|zram)/.test(name)));
  } catch {
    return new Set();
  }
}

/** Samples the bytes the machine's disks have written every 50 ms until stopped; null where /proc/diskstats is not. */
export class DiskWriteSampler {
  private readonly disks = wholeDisks();
  private readonly samples: DiskSample[] = [];
  private timer: NodeJS.Timeout | null = null;

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), EVERY_MS);
    return this;
  }

  private sample(): void {
    try {
      this.samples.push({ atMs: performance.now(), bytes: bytesWritten(readFileSync('/proc/diskstats', 'utf8'), this.disks) });
    } catch {
      // not Linux: no samples, and stop() answers null
    }
  }

  /** The bursts seen since start, or null when the disks could not be read. */
  stop(): Burst[] | null {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sample();
    return this.samples.length > 1 && this.disks.size ? burstsOf(this.samples) : null;
  }
}
