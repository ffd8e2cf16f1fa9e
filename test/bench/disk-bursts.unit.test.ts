/**
 * The bench's disk bursts (bench/disk-bursts.ts): bytes written read from /proc/diskstats text, the
 * sampled intervals that wrote at least 8 MiB, and which slow requests were due during one or just after.
 */
import { describe, expect, it } from 'vitest';
import { BURST_BYTES, burstsOf, bytesWritten, nearBursts } from '../../bench/disk-bursts.js';

// Two disks and a partition, as /proc/diskstats prints them (the 10th field is sectors written).
const DISKSTATS = [
  ' 253       0 vda 81230 1733 5326214 21045 1998212 1502839 73521536 2399818 0 1032952 2472563 0 0 0 0 151276 51699',
  ' 253       1 vda1 81000 1700 5326000 21000 1998000 1502800 73521000 2399800 0 1032900 2472500 0 0 0 0 0 0',
  ' 259       0 nvme0n1 10 0 80 1 4 0 1000 2 0 3 3',
  '   7       0 loop0 12 0 24 0 0 0 0 0 0 4 0 0 0 0 0 0 0',
].join('\n');

describe('bench disk bursts', () => {
  it('sums the sectors written by the named disks only, in bytes', () => {
    expect(bytesWritten(DISKSTATS, new Set(['vda']))).toBe(73_521_536 * 512);
    expect(bytesWritten(DISKSTATS, new Set(['vda', 'nvme0n1']))).toBe((73_521_536 + 1_000) * 512);
    expect(bytesWritten(DISKSTATS, new Set(['sdz']))).toBe(0);
  });

  it('keeps the intervals that wrote at least 8 MiB, with their span and size', () => {
    const MiB = 1024 * 1024;
    const samples = [
      { atMs: 0, bytes: 0 },
      { atMs: 50, bytes: 1 * MiB },
      { atMs: 100, bytes: 1 * MiB + 17 * MiB },
      { atMs: 150, bytes: 18 * MiB + BURST_BYTES - 1 },
      { atMs: 200, bytes: 18 * MiB + BURST_BYTES - 1 + BURST_BYTES },
    ];
    expect(burstsOf(samples)).toEqual([
      { fromMs: 50, toMs: 100, bytes: 17 * MiB },
      { fromMs: 150, toMs: 200, bytes: BURST_BYTES },
    ]);
    expect(burstsOf(samples, 20 * MiB)).toEqual([]);
    expect(burstsOf(samples.slice(0, 1))).toEqual([]);
  });

  it('counts the moments during a burst or in the 250 ms after it', () => {
    const bursts = [{ fromMs: 1_000, toMs: 1_050, bytes: BURST_BYTES }];
    expect(nearBursts([999, 1_000, 1_025, 1_300, 1_301, 5_000], bursts)).toBe(3);
    expect(nearBursts([1_301], bursts, 300)).toBe(1);
    expect(nearBursts([1_000], [])).toBe(0);
  });
});
