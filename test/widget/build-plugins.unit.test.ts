/**
 * The widget build's `modernTrpcHelpers` (vite.config.ts) swaps
 * @trpc/client's Babel helpers for built-ins: what the swapped module does
 * must be what the shipped one does, for the calls @trpc/client makes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { modernTrpcHelpers } from '../../vite.config.js';

const DIST = join(process.cwd(), 'node_modules/@trpc/client/dist');
const file = readdirSync(DIST).find((name) => /^objectSpread2-[\w-]+\.mjs$/.test(name))!;
const id = join(DIST, file);
const original = readFileSync(id, 'utf8');

type Helpers = { n: (e: object, r: string, t: unknown) => object; t: (...objects: object[]) => Record<string | symbol, unknown> };
const load = async (code: string) => (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as Helpers;

function transformed(): string {
  const plugin = modernTrpcHelpers();
  const result = (plugin.transform as (code: string, id: string) => { code: string } | null).call({}, original, id);
  if (!result) throw new Error(`the plugin left ${file} alone: @trpc/client's helpers changed, revisit the plugin`);
  return result.code;
}

describe('modernTrpcHelpers', () => {
  it('replaces the helpers module with a smaller one', () => {
    expect(transformed().length).toBeLessThan(original.length / 4);
  });

  it('spreads as _objectSpread2 does, in the shapes @trpc/client calls it', async () => {
    const [before, after] = await Promise.all([load(original), load(transformed())]);
    const tag = Symbol('tag');
    const opts = { type: 'query', path: 'checkout.get', input: { token: 'x' }, [tag]: 1 };
    for (const helpers of [before, after]) {
      const op = helpers.t(helpers.t({}, opts), {}, { signal: null, path: 'override' });
      expect(op).toEqual({ type: 'query', path: 'override', input: { token: 'x' }, signal: null, [tag]: 1 });
      expect(op[tag]).toBe(1);
      expect(helpers.t(helpers.t({}, undefined as unknown as object), {}, { lastEventId: '7' })).toEqual({ lastEventId: '7' });
    }
  });

  it('defines own, enumerable, writable, configurable properties as _defineProperty does', async () => {
    const [before, after] = await Promise.all([load(original), load(transformed())]);
    const shapes = [before, after].map((helpers) => {
      const target = {};
      const returned = helpers.n(target, 'links', undefined);
      return { same: returned === target, descriptor: Object.getOwnPropertyDescriptor(target, 'links') };
    });
    expect(shapes[1]).toEqual(shapes[0]);
    expect(shapes[1]).toEqual({ same: true, descriptor: { value: undefined, enumerable: true, configurable: true, writable: true } });
  });
});
