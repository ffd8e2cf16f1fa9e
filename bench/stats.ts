/** Small numeric helpers shared by the scenarios. */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The q-quantile (0..1) of `values` by linear interpolation; null when there are none. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export type Percentiles = { p50: number | null; p95: number | null; p99: number | null };

export function percentiles(values: readonly number[]): Percentiles {
  return { p50: quantile(values, 0.5), p95: quantile(values, 0.95), p99: quantile(values, 0.99) };
}

/** The arithmetic mean of `values`; null when there are none. */
export function mean(values: readonly number[]): number | null {
  return values.length ? values.reduce((sum, v) => sum + v, 0) / values.length : null;
}

/** The sum of `parts`, or null when any is unknown (a CPU that could not be read). */
export function sumOrNull(...parts: readonly (number | null | undefined)[]): number | null {
  let sum = 0;
  for (const part of parts) {
    if (part === null || part === undefined || !Number.isFinite(part)) return null;
    sum += part;
  }
  return sum;
}

/** Round to `digits` decimals, keeping null (and refusing non-finite values). */
export function round(value: number | null | undefined, digits = 1): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Wall clock in milliseconds with sub-millisecond resolution (epoch based, comparable with a browser's timeOrigin + now()). */
export const epochMs = () => performance.timeOrigin + performance.now();
