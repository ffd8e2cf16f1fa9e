/**
 * The widget build's `modernTrpcHelpers` (vite.config.ts) swaps the Babel
 * helpers of @trpc/client and @trpc/server for built-ins: what the swapped
 * module does must be what the shipped one does, for the calls tRPC makes.
 * `raceWithoutUnpromise` swaps one `Unpromise.race` for `Promise.race`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { modernTrpcHelpers, raceWithoutUnpromise } from '../../vite.config.js';

const distFile = (pkg: 'client' | 'server', pattern: RegExp) => {
  const dir = join(process.cwd(), `node_modules/@trpc/${pkg}/dist`);
  const id = join(dir, readdirSync(dir).find((name) => pattern.test(name))!);
  return { id, code: readFileSync(id, 'utf8') };
};
const { id, code: original } = distFile('client', /^objectSpread2-[\w-]+\.mjs$/);
const file = id.split('/').pop()!;
type Transform = (code: string, id: string) => { code: string } | null;
const run = (plugin: { transform?: unknown }, code: string, at: string) => (plugin.transform as Transform).call({}, code, at);

type Helpers = { n: (e: object, r: string, t: unknown) => object; t: (...objects: object[]) => Record<string | symbol, unknown> };
const load = async (code: string) => (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as Helpers;

function transformed(): string {
  const result = run(modernTrpcHelpers(), original, id);
  if (!result) throw new Error(`the plugin left ${file} alone: @trpc/client's helpers changed, revisit the plugin`);
  return result.code;
}

describe('modernTrpcHelpers', () => {
  it('leaves the ES5 helpers unused, so the bundle drops them', async () => {
    // typeof, toPrimitive and toPropertyKey served only the rewritten two: the module works without them.
    const unused = /\/\/#region \\0@oxc-project[^\n]*\/(typeof|toPrimitive|toPropertyKey)\.js\n[\s\S]*?\/\/#endregion/g;
    const lean = transformed().replace(unused, '');
    expect(lean).not.toMatch(/_typeof|toPrimitive|toPropertyKey|ownKeys/);
    expect(lean.length).toBeLessThan(original.length / 4);
    const helpers = await load(lean);
    expect(helpers.t({}, { a: 1 }, { b: 2 })).toEqual({ a: 1, b: 2 });
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

  it("rewrites @trpc/server's own copy of the same two helpers, which it exports to the modules that use them", () => {
    const server = distFile('server', /^getErrorShape-[\w-]+\.mjs$/);
    const result = run(modernTrpcHelpers(), server.code, server.id);
    if (!result) throw new Error(`the plugin left ${server.id} alone: @trpc/server's helpers changed, revisit the plugin`);
    expect(result.code).not.toMatch(/function _objectSpread2\(|function ownKeys\(|toPropertyKey\(r\)/);
    expect(result.code).toContain('const _objectSpread2 = Object.assign;');
    expect(result.code).toContain('return Object.defineProperty(e, r, { value: t, enumerable: true, configurable: true, writable: true });');
    // Everything else of the module is as shipped: the two regions are all that changed.
    const rewritten = /\/\/#region \\0@oxc-project[^\n]*\/(objectSpread2|defineProperty)\.js\n[\s\S]*?\/\/#endregion/g;
    const modern = /const _objectSpread2 = Object\.assign;|function _defineProperty\(e, r, t\) \{\n\treturn Object\.defineProperty\([^\n]*\n\}/g;
    expect(result.code.replace(modern, '')).toBe(server.code.replace(rewritten, ''));
  });

  it('leaves modules without those helpers alone', () => {
    const other = distFile('client', /^httpLink-[\w-]+\.mjs$/);
    expect(run(modernTrpcHelpers(), other.code, other.id)).toBeNull();
  });
});

describe('raceWithoutUnpromise', () => {
  const shipped = distFile('server', /^resolveResponse-[\w-]+\.mjs$/);

  it("swaps the SSE consumer's one Unpromise.race for Promise.race and nothing else", () => {
    const result = run(raceWithoutUnpromise(), shipped.code, shipped.id);
    if (!result) throw new Error(`the plugin left ${shipped.id} alone: @trpc/server's withTimeout changed, revisit the plugin`);
    expect(result.code).toContain('await Promise.race([opts.promise, timeoutPromise.start()])');
    expect(result.code.replace('await Promise.race([opts.promise', 'await Unpromise.race([opts.promise')).toBe(shipped.code);
  });

  it('touches no other module', () => {
    expect(run(raceWithoutUnpromise(), shipped.code, shipped.id.replace('resolveResponse', 'other'))).toBeNull();
  });

  it('reconnects a silent stream after the inactivity time exactly as the shipped module does', async () => {
    const changed = run(raceWithoutUnpromise(), shipped.code, shipped.id)!.code;
    const [before, after] = await Promise.all([loadSseConsumer(shipped.code), loadSseConsumer(changed)]);
    expect(await silentStreamStory(after)).toEqual(await silentStreamStory(before));
    expect(await silentStreamStory(after)).toEqual(['connecting', 'connected', 'data 1', 'timeout', 'connecting', 'data 2', 'opened 2, closed 2']);
  });
});

type SseConsumer = (opts: object) => AsyncIterable<{ type: string; data?: { data: unknown } }>;
const scratch = mkdtempSync(join(tmpdir(), 'kassa-trpc-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The module's `sseStreamConsumer`, loaded from a copy whose relative imports point at the installed package. */
async function loadSseConsumer(code: string): Promise<SseConsumer> {
  const dist = pathToFileURL(dirname(distFile('server', /^resolveResponse-[\w-]+\.mjs$/).id)).href;
  const file = join(scratch, `consumer-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, code.replace(/from "\.\/([\w-]+\.mjs)"/g, `from "${dist}/$1"`).replace(/^\/\/# sourceMappingURL=.*$/m, ''));
  const exported = /export \{[^}]*\bsseStreamConsumer as (\w+)\b/.exec(code)![1]!;
  return ((await import(pathToFileURL(file).href)) as Record<string, SseConsumer>)[exported]!;
}

/** A stream that says it reconnects after 30 ms of silence, sends one message, then goes silent. */
async function silentStreamStory(consume: SseConsumer): Promise<string[]> {
  const sources: FakeEventSource[] = [];
  class FakeEventSource {
    readonly CLOSED = 2;
    readyState = 1;
    listeners = new Map<string, ((event: { data?: string; lastEventId?: string }) => void)[]>();
    constructor() {
      sources.push(this);
    }
    addEventListener(type: string, listener: (event: { data?: string }) => void) {
      this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
    }
    emit(type: string, data?: unknown) {
      for (const listener of this.listeners.get(type) ?? []) listener({ data: JSON.stringify(data), lastEventId: '' });
    }
    close() {
      this.readyState = this.CLOSED;
    }
  }
  const story: string[] = [];
  const abort = new AbortController();
  const stream = consume({ url: () => 'http://kassa.test/updates', init: () => ({}), EventSource: FakeEventSource, signal: abort.signal });
  for await (const event of stream) {
    story.push(event.type === 'data' ? `data ${String(event.data!.data)}` : event.type);
    const source = sources.at(-1)!;
    if (story.length === 1) setTimeout(() => source.emit('connected', { reconnectAfterInactivityMs: 30 }));
    if (story.length === 2) setTimeout(() => source.emit('message', 1));
    // after 'data 1' nothing comes: the consumer must give up on this source after 30 ms and open another
    if (story.length === 5) setTimeout(() => source.emit('message', 2));
    if (story.length === 6) break;
  }
  abort.abort();
  story.push(`opened ${sources.length}, closed ${sources.filter((s) => s.readyState === s.CLOSED).length}`);
  return story;
}
