/**
 * Times in tRPC answers and the CLI's --json as the REST API writes them (CONTRACT §4, spec §2):
 * integers, UNIX seconds. Without this a database `Date` would cross the wire
 * as an ISO string (tRPC has no transformer here), and an internal tool
 * would see `createdAt` in two formats depending on which API it asked. Pure.
 */
export type UnixTimes<T> = T extends Date
  ? number
  : T extends readonly (infer U)[]
    ? UnixTimes<U>[]
    : T extends object
      ? { [K in keyof T]: UnixTimes<T[K]> }
      : T;

export function unixTimes<T>(value: T): UnixTimes<T> {
  if (value instanceof Date) return Math.floor(value.getTime() / 1000) as UnixTimes<T>;
  if (Array.isArray(value)) return value.map(unixTimes) as UnixTimes<T>;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unixTimes(v)])) as UnixTimes<T>;
  }
  return value as UnixTimes<T>;
}
