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
 * - `trimQrcode`: qrcode-generator is one closure a bundler cannot
 *   tree-shake, carrying GIF/table/ASCII/SVG-string renderers, a base64
 *   codec and Shift-JIS support the widget never calls (it only uses
 *   addData, make, getModuleCount and isDark, in byte mode);
 * - `treeShakeTrpcWsLink`: see below.
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
  raw.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\s+/g, ' ').replace(/\s*([{};,>])\s*/g, '$1').replace(/: /g, ':').replace(/;}/g, '}').trim();

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

const RULE = '//---------------------------------------------------------------------\n';

export function trimQrcode(): Plugin {
  return {
    name: 'kassa:trim-qrcode',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]qrcode-generator[\\/]dist[\\/]qrcode\.mjs$/.test(id)) return null;
      let out = code;
      const cut = (from: string, to: string, replacement = '') => {
        const start = out.indexOf(from);
        const end = start < 0 ? -1 : out.indexOf(to, start);
        if (end < 0) this.error(`qrcode-generator no longer has "${from.trim()}" … "${to.trim()}": update trimQrcode in vite.config.ts`);
        out = out.slice(0, start) + replacement + out.slice(end);
      };
      // Renderers, at the end of the qrcode() closure (its `return _this;` stays).
      cut('  _this.createTableTag = function', '  return _this;\n};');
      // Custom string encodings (Shift-JIS tables come as base64).
      cut(`${RULE}// qrcode.createStringToBytes`, `${RULE}// QRMode`);
      // Numeric and alphanumeric modes (payment URIs go in byte mode).
      cut(`${RULE}// qrNumber`, `${RULE}// qr8BitByte`, "const qrNumber = function() { throw 'mode:Numeric'; };\nconst qrAlphaNum = function() { throw 'mode:Alphanumeric'; };\n\n");
      // Kanji mode, byte streams, base64 and the GIF encoder.
      cut(`${RULE}// qrKanji`, 'export default qrcode;', "const qrKanji = function() { throw 'mode:Kanji'; };\n\n");
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

export default defineConfig({
  plugins: [minifyLitTemplates(), trimQrcode(), treeShakeTrpcWsLink()],
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
