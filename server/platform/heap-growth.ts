/**
 * How far V8 lets the old generation grow past what survived the last full collection before it
 * collects again, for a Kassa server process: 3× (`--heap-growing-percent=200`).
 *
 * Why: each request leaves a little behind that outlives two scavenges (bench scenario 1 measured
 * ~1 KB a create), so the old generation fills at a steady pace under load. Left to itself, V8
 * picks the factor from how busy the process was at its last full collection: 1.2–1.7 under load
 * once the idle heap shrank to ~34 MB, so a mark-compact came every 2–3 s at full create speed,
 * with incremental-marking steps of up to 9 ms on the event loop. Bench scenario 1, six runs each
 * (evenly paced creates at half the maximum rate): p99 7.2–27.3 ms (median 15) left to V8, 5.7–7.5 ms
 * at 3×, for an RSS peak of 153–203 against 192–200 MiB.
 *
 * An operator's own `--heap-growing-percent` on node's command line wins (`node
 * --heap-growing-percent=50 dist/server/main.js`; NODE_OPTIONS may not carry it, node refuses it
 * there, but it is read too in case a later node allows it).
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 200;

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/** Whether the process was started with its own growing factor. Pure. */
export function growthGivenByOperator(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((arg) => FLAG.test(arg));
}

/** Sets Kassa's growing factor unless the operator gave one; true when it did. */
export function tuneHeapGrowth(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS): boolean {
  if (growthGivenByOperator(execArgv, nodeOptions)) return false;
  // Read by V8 at each full collection when it sets the next limit, so setting it at start is in time.
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
