/**
 * Statements of concurrent requests gathered into one (platform/batch.ts):
 * what is called in one turn of the event loop goes out together, a batch
 * gathers while the in-flight limit is reached, and one item's error stays
 * that item's.
 */
import { describe, expect, it } from 'vitest';
import { batched, batchMetrics } from '../../server/platform/batch.js';

/** A batch runner that records each call's items and answers when `open` is called. */
function recorder<In>() {
  const calls: In[][] = [];
  const pending: (() => void)[] = [];
  const run = (items: readonly In[]) =>
    new Promise<string[]>((resolve) => {
      calls.push([...items]);
      pending.push(() => resolve(items.map((item) => `done ${String(item)}`)));
    });
  return { calls, run, openAll: () => pending.splice(0).forEach((open) => open()) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('batched', () => {
  it('sends the items of one turn of the event loop as one batch, each answered with its own result', async () => {
    const r = recorder<number>();
    const add = batched(r.run, { maxSize: 64, maxInFlight: 2 });
    const answers = Promise.all([add(1), add(2), add(3)]);
    await turn();
    expect(r.calls).toEqual([[1, 2, 3]]);
    r.openAll();
    expect(await answers).toEqual(['done 1', 'done 2', 'done 3']);
  });

  it('splits at maxSize', async () => {
    const r = recorder<number>();
    const add = batched(r.run, { maxSize: 2, maxInFlight: 5 });
    const answers = Promise.all([1, 2, 3, 4, 5].map((n) => add(n)));
    await turn();
    expect(r.calls).toEqual([[1, 2], [3, 4], [5]]);
    r.openAll();
    expect(await answers).toHaveLength(5);
  });

  it('gathers the next batch while maxInFlight batches are out, and sends it when one comes back', async () => {
    const r = recorder<number>();
    const add = batched(r.run, { maxSize: 64, maxInFlight: 1 });
    const first = add(1);
    await turn();
    const later = [add(2), add(3)];
    await turn();
    const last = add(4);
    await turn();
    // 2, 3 and 4 arrived while batch [1] was at the database: they wait, together.
    expect(r.calls).toEqual([[1]]);
    r.openAll();
    expect(await first).toBe('done 1');
    await turn();
    expect(r.calls).toEqual([[1], [2, 3, 4]]);
    r.openAll();
    expect(await Promise.all([...later, last])).toEqual(['done 2', 'done 3', 'done 4']);
  });

  it('pipelined: lets a gathering batch out beside the one at the database once it is as large, not before', async () => {
    const r = recorder<number>();
    const add = batched(r.run, { maxSize: 64, maxInFlight: 1, pipelined: 2 });
    const first = [add(1), add(2), add(3)];
    await turn();
    expect(r.calls).toEqual([[1, 2, 3]]);
    // Two items are fewer than the three out: they wait.
    const second = [add(4), add(5)];
    await turn();
    expect(r.calls).toEqual([[1, 2, 3]]);
    // The third makes it as large: it goes at once, while [1, 2, 3] is still out.
    second.push(add(6));
    expect(r.calls).toEqual([[1, 2, 3], [4, 5, 6]]);
    // Two are out, the most `pipelined` allows: the next gathers however large it grows.
    const third = [7, 8, 9, 10].map((n) => add(n));
    await turn();
    expect(r.calls).toHaveLength(2);
    r.openAll();
    expect(await Promise.all([...first, ...second])).toEqual(['done 1', 'done 2', 'done 3', 'done 4', 'done 5', 'done 6']);
    await turn();
    expect(r.calls).toEqual([[1, 2, 3], [4, 5, 6], [7, 8, 9, 10]]);
    r.openAll();
    expect(await Promise.all(third)).toEqual(['done 7', 'done 8', 'done 9', 'done 10']);
  });

  it('pipelined: when the first of two out comes back, a smaller gathered batch waits for the second', async () => {
    // A runner answering each call on its own, so that the first of two can come back alone.
    const calls: number[][] = [];
    const opens: (() => void)[] = [];
    const run = (items: readonly number[]) => new Promise<string[]>((resolve) => {
      calls.push([...items]);
      opens.push(() => resolve(items.map((n) => `done ${n}`)));
    });
    const add = batched(run, { maxSize: 64, maxInFlight: 1, pipelined: 2 });
    const answers = [add(1), add(2)];
    await turn();
    answers.push(add(3), add(4));
    await turn();
    expect(calls).toEqual([[1, 2], [3, 4]]);
    answers.push(add(5));
    await turn();
    // [1, 2] comes back; [3, 4] is still out and [5] is smaller: it waits.
    opens[0]!();
    await turn();
    expect(calls).toHaveLength(2);
    // [3, 4] comes back: [5] goes.
    opens[1]!();
    await turn();
    expect(calls).toEqual([[1, 2], [3, 4], [5]]);
    opens[2]!();
    expect(await Promise.all(answers)).toEqual(['done 1', 'done 2', 'done 3', 'done 4', 'done 5']);
  });

  it('runs a batch refused as a whole again an item at a time, so only the bad item fails', async () => {
    const calls: string[][] = [];
    const add = batched(
      async (items: readonly string[]) => {
        calls.push([...items]);
        if (items.includes('bad')) throw new Error('check constraint violated');
        return items.map((item) => item.toUpperCase());
      },
      { maxSize: 64, maxInFlight: 2 },
    );
    const answers = await Promise.allSettled([add('a'), add('bad'), add('c')]);
    expect(answers).toEqual([
      { status: 'fulfilled', value: 'A' },
      { status: 'rejected', reason: new Error('check constraint violated') },
      { status: 'fulfilled', value: 'C' },
    ]);
    expect(calls).toEqual([['a', 'bad', 'c'], ['a'], ['bad'], ['c']]);
  });

  it('a lone item waits for nothing but the next turn', async () => {
    const add = batched(async (items: readonly number[]) => items.map((n) => n * 2), { maxSize: 64, maxInFlight: 2 });
    expect(await add(21)).toBe(42);
  });

  it('a named batcher measures each statement: items, round trip, and time held behind an in-flight one', async () => {
    const name = `unit_${Math.random().toString(36).slice(2)}`;
    /** The sum and count of one of the batcher's histograms. */
    const read = async (histogram: (typeof batchMetrics)[keyof typeof batchMetrics]) => {
      const metric = await histogram.get();
      const values = metric.values.filter((v) => v.labels.batch === name);
      const pick = (suffix: string) => values.find((v) => v.metricName === `${metric.name}${suffix}`)?.value ?? 0;
      return { sum: pick('_sum'), count: pick('_count') };
    };
    const r = recorder<number>();
    const add = batched(r.run, { maxSize: 64, maxInFlight: 1, name });
    const first = Promise.all([add(1), add(2), add(3)]);
    await turn();
    const second = add(4);
    await turn();
    await new Promise((resolve) => setTimeout(resolve, 20));
    r.openAll();
    await first;
    await turn();
    r.openAll();
    await second;

    expect(await read(batchMetrics.items)).toEqual({ sum: 4, count: 2 });
    const seconds = await read(batchMetrics.seconds);
    expect(seconds.count).toBe(2);
    // The first batch was at the "database" for the 20 ms the test held it.
    expect(seconds.sum).toBeGreaterThanOrEqual(0.019);
    const held = await read(batchMetrics.heldSeconds);
    expect(held.count).toBe(2);
    // [4] waited those 20 ms for [1, 2, 3]; [1, 2, 3] went at once (held 0: the first bucket, ≤ 0.5 ms, has one).
    expect(held.sum).toBeGreaterThanOrEqual(0.019);
    const firstBucket = (await batchMetrics.heldSeconds.get()).values.find(
      (v) => v.labels.batch === name && v.metricName?.endsWith('_bucket') && String((v.labels as Record<string, unknown>).le) === '0.0005',
    );
    expect(firstBucket?.value).toBe(1);
  });

  it('an unnamed batcher adds no series', async () => {
    const before = (await batchMetrics.items.get()).values.length;
    const add = batched(async (items: readonly number[]) => [...items], { maxSize: 64, maxInFlight: 2 });
    expect(await add(7)).toBe(7);
    expect((await batchMetrics.items.get()).values.length).toBe(before);
  });
});
