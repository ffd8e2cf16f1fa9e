/**
 * Builds the checkout widget (widget/crypto-checkout.ts) into one minified
 * ES module, dist/widget/crypto-checkout.js, served at /widget/crypto-checkout.js,
 * plus one small chunk per non-English language (dist/widget/locale-*.js),
 * fetched by the module when a checkout speaks that language.
 *
 * Build-only plugins keep the module small (scripts/widget-size.ts
 * measures it against its 25 kB, 25,000-byte gzip budget):
 * - `minifyLitTemplates`: minifiers leave template strings alone, so the
 *   html`` and css`` templates of widget/ would ship their indentation;
 * - `treeShakeTrpcWsLink`, `modernTrpcHelpers`, `raceWithoutUnpromise`: see below.
 */
import { defineConfig, parseAst, type Plugin } from 'vite';

type Node = { type?: string; start: number; end: number; [key: string]: unknown };

function walk(node: unknown, visit: (n: Node) => void): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach((child) => walk(child, visit));
  if ((node as Node).type) visit(node as Node);
  for (const value of Object.values(node)) if (value && typeof value === 'object') walk(value, visit);
}

const minifyHtml = (raw: string) => raw.replace(/>\s*\n\s*</g, '><').replace(/\s*\n\s*/g, ' ');
// Safe for this project's CSS: a colon followed by a space only ever starts a declaration value
// (and `+`/`-` keep their spaces: calc() needs them).
const minifyCss = (raw: string) =>
  tightenSiblingCombinators(
    raw.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\s+/g, ' ').replace(/\s*([{};,>])\s*/g, '$1').replace(/: /g, ':').replace(/;}/g, '}').replace(/ !important/g, '!important').replace(/([:,( ])0\.(\d)/g, '$1.$2'),
  ).trim();

/** `li + li` → `li+li`, outside parentheses only: inside calc() the spaces around `+` are required. */
function tightenSiblingCombinators(css: string): string {
  let depth = 0;
  let out = '';
  for (let i = 0; i < css.length; i++) {
    const c = css[i]!;
    if (c === '(') depth++;
    else if (c === ')') depth--;
    if (depth === 0 && c === ' ' && css[i + 1] === '+' && css[i + 2] === ' ') {
      out += '+';
      i += 2;
    } else out += c;
  }
  return out;
}

export function minifyLitTemplates(): Plugin {
  return {
    name: 'kassa:minify-lit-templates',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]widget[\\/].*\.ts$/.test(id) || !/\b(html|css)`/.test(code)) return null;
      const edits: { start: number; end: number; text: string }[] = [];
      walk(parseAst(code, { lang: 'ts' }), (n) => {
        if (n.type !== 'TaggedTemplateExpression') return;
        const tag = (n.tag as { name?: string }).name;
        if (tag !== 'html' && tag !== 'css') return;
        for (const quasi of (n.quasi as { quasis: (Node & { value: { raw: string } })[] }).quasis) {
          const { raw } = quasi.value;
          const start = quasi.start + 1; // after ` or }
          if (code.slice(start, start + raw.length) !== raw) this.error(`template position mismatch in ${id}`);
          edits.push({ start, end: start + raw.length, text: tag === 'css' ? minifyCss(raw) : minifyHtml(raw) });
        }
      });
      let out = code;
      for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
      return { code: out, map: null };
    },
  };
}

/**
 * @trpc/client 11 defines `WsConnection.connectCount` by a top-level call,
 * a side effect that keeps the whole WebSocket client in any bundle that
 * imports the package (~0.7 KB gzip here, unused: the widget speaks HTTP and
 * SSE). The same value as a static class field lets tree-shaking drop it.
 * A no-op when the file no longer looks like this.
 */
export function treeShakeTrpcWsLink(): Plugin {
  const call = '_defineProperty(WsConnection, "connectCount", 0);';
  const head = 'var WsConnection = class WsConnection {';
  return {
    name: 'kassa:tree-shake-trpc-ws-link',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]@trpc[\\/]client[\\/]dist[\\/]wsLink-[\w-]+\.mjs$/.test(id) || !code.includes(call) || !code.includes(head)) return null;
      return { code: code.replace(call, '').replace(head, `${head}\n\tstatic connectCount = 0;`), map: null };
    },
  };
}

/**
 * @trpc/client and @trpc/server 11 each ship a copy of Babel's ES5 helpers
 * for object spread and class fields (`_objectSpread2`, `_defineProperty`
 * with `_typeof`, `toPrimitive`, `toPropertyKey`: ~0.4 KB gzip a copy). The
 * widget targets ES2022, where the same operations are built in: every call
 * site passes a fresh `{}` target or `this` with a string key, so
 * `Object.assign` and `Object.defineProperty` do exactly what the helpers do.
 * The bundler marks each helper with a `//#region` naming it; those two
 * regions are rewritten (the helpers they alone used then go unused and are
 * dropped). A no-op for a module without them.
 */
const MODERN_HELPERS: Record<string, string> = {
  defineProperty: 'function _defineProperty(e, r, t) {\n\treturn Object.defineProperty(e, r, { value: t, enumerable: true, configurable: true, writable: true });\n}',
  objectSpread2: 'const _objectSpread2 = Object.assign;',
};
const HELPER_REGION = /\/\/#region \\0@oxc-project\+runtime@[\w.-]+\/helpers\/esm\/(defineProperty|objectSpread2)\.js\n[\s\S]*?\/\/#endregion/g;

export function modernTrpcHelpers(): Plugin {
  return {
    name: 'kassa:modern-trpc-helpers',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]@trpc[\\/](client|server)[\\/]dist[\\/][\w-]+\.mjs$/.test(id) || !code.includes('/helpers/esm/')) return null;
      let rewritten = 0;
      const out = code.replace(HELPER_REGION, (region, name: string) => {
        // The region must define the function it is named for; anything else is left as shipped.
        if (!region.includes(`function _${name}(`)) return region;
        rewritten++;
        return MODERN_HELPERS[name]!;
      });
      return rewritten ? { code: out, map: null } : null;
    },
  };
}

/**
 * @trpc/server's server-sent-events consumer (behind `httpSubscriptionLink`)
 * races each read of the stream against the inactivity timer with
 * `Unpromise.race`, from a vendored copy of the `unpromise` library that only
 * this call keeps in the widget (~0.65 KB gzip). Unpromise exists so that
 * racing one long-lived promise again and again does not pile reactions onto
 * it. Here both racers are made for that race alone (one read of the stream,
 * one timer disposed right after), so `Promise.race` settles the same way and
 * holds nothing longer than they live. A no-op when the call is not there.
 */
export function raceWithoutUnpromise(): Plugin {
  const call = 'await Unpromise.race([opts.promise, timeoutPromise.start()])';
  return {
    name: 'kassa:race-without-unpromise',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]@trpc[\\/]server[\\/]dist[\\/]resolveResponse-[\w-]+\.mjs$/.test(id) || code.split(call).length !== 2) return null;
      return { code: code.replace(call, 'await Promise.race([opts.promise, timeoutPromise.start()])'), map: null };
    },
  };
}

export default defineConfig({
  plugins: [minifyLitTemplates(), treeShakeTrpcWsLink(), modernTrpcHelpers(), raceWithoutUnpromise()],
  build: {
    outDir: 'dist/widget',
    emptyOutDir: true,
    target: 'es2022',
    minify: true,
    lib: {
      entry: 'widget/crypto-checkout.ts',
      formats: ['es'],
      fileName: () => 'crypto-checkout.js',
    },
    rolldownOptions: {
      // Library mode keeps whitespace for ES output; minify the bundle itself so the served file is small.
      output: { minify: true, chunkFileNames: 'locale-[name]-[hash].js' },
    },
  },
});
