/**
 * Builds the checkout widget (widget/crypto-checkout.ts) into one minified
 * ES module, dist/widget/crypto-checkout.js, served at /widget/crypto-checkout.js,
 * plus one small chunk per non-English language (dist/widget/locale-*.js),
 * fetched by the module when a checkout speaks that language.
 *
 * Build-only plugins keep the module small (scripts/widget-size.ts
 * measures it against its 25 KB gzip budget):
 * - `minifyLitTemplates`: minifiers leave template strings alone, so the
 *   html`` and css`` templates of widget/ would ship their indentation;
 * - `treeShakeTrpcWsLink`, `modernTrpcHelpers`: see below.
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
 * @trpc/client 11 ships Babel's ES5 helpers for object spread and class
 * fields (`_objectSpread2`, `_defineProperty` with `_typeof`, `toPrimitive`,
 * ~0.4 KB gzip). The widget targets ES2022, where the same operations are
 * built in: every call site passes a fresh `{}` target or `this` with a
 * string key, so `Object.assign` and `Object.defineProperty` do exactly what
 * the helpers do. A no-op when the module no longer exports these two.
 */
export function modernTrpcHelpers(): Plugin {
  const exported = 'export { _defineProperty as n, _objectSpread2 as t };';
  return {
    name: 'kassa:modern-trpc-helpers',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]@trpc[\\/]client[\\/]dist[\\/]objectSpread2-[\w-]+\.mjs$/.test(id) || !code.includes(exported)) return null;
      return {
        code:
          'const _defineProperty = (e, r, t) => Object.defineProperty(e, r, { value: t, enumerable: true, configurable: true, writable: true });\n' +
          'const _objectSpread2 = Object.assign;\n' +
          exported,
        map: null,
      };
    },
  };
}

export default defineConfig({
  plugins: [minifyLitTemplates(), treeShakeTrpcWsLink(), modernTrpcHelpers()],
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
