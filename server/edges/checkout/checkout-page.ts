/**
 * The hosted checkout page at `paymentUrl` and the widget module it loads.
 * The page may be framed by any origin (CONTRACT §7), so it carries a CSP
 * with `frame-ancestors *` and nothing else it does not need.
 *
 * The widget is dist/widget/crypto-checkout.js (built by `npm run build:widget`)
 * and one chunk per non-English language (locale-<lang>-<hash>.js), read
 * once at start, compressed once (brotli or gzip, on first request) and served with an ETag:
 * - `/widget/crypto-checkout.js` — the URL merchants paste: cached an hour,
 *   then served stale while it revalidates for a week;
 * - `/widget/crypto-checkout.js?v=<hash>` — what the hosted page loads:
 *   immutable for a year, the hash changes with the content;
 * - the language chunks have content hashes in their names: immutable.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectPath } from '../../platform/project-paths.js';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { Deps } from '../../deps.js';
import { problem, sendProblem } from '../rest/problem.js';
import { checkoutView, findPaymentByToken, TOKEN_RE } from '../../modules/payments/index.js';
import type { CheckoutView } from '../../modules/payments/index.js';
import { RateLimitedError } from '../../platform/rate-limit.js';
import { localeLanguage } from '../../modules/payments/index.js';
import { renderCheckoutElement } from './first-view.js';

export const WIDGET_DIR = projectPath('dist/widget') + '/';
export const WIDGET_FILE = join(WIDGET_DIR, 'crypto-checkout.js');
const ENTRY = 'crypto-checkout.js';

const CHECKOUT_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Lit adopts constructed stylesheets; older engines fall back to <style> in the shadow root.
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self'",
  "require-trusted-types-for 'script'",
  'trusted-types lit-html',
  'frame-ancestors *',
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const escapeAttr = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

type Encoding = 'br' | 'gzip';
type Asset = { identity: Buffer; hash: string; encoded: (encoding: Encoding) => Buffer };

/** A file's bytes, compressed on first request per encoding (not at start: every test app would pay for it). */
function asset(identity: Buffer): Asset {
  const cache: Partial<Record<Encoding, Buffer>> = {};
  return {
    identity,
    hash: createHash('sha256').update(identity).digest('base64url').slice(0, 16),
    encoded: (encoding) =>
      (cache[encoding] ??=
        encoding === 'br' ? brotliCompressSync(identity, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }) : gzipSync(identity, { level: 9 })),
  };
}

/** Every .js file of the built widget, keyed by file name; null when the entry module is missing. */
export function loadWidgetAssets(dir = WIDGET_DIR): Map<string, Asset> | null {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^[\w.-]+\.js$/.test(n));
  } catch {
    return null;
  }
  if (!names.includes(ENTRY)) return null;
  const assets = new Map<string, Asset>();
  for (const name of names) assets.set(name, asset(readFileSync(join(dir, name))));
  return assets;
}

/**
 * The checkout view as a JSON data block, the element's child: the widget
 * shows it at once instead of asking for it first (the live updates then
 * carry every change). `<` is escaped so no text in it can close the script
 * element.
 */
export const inlinedView = (view: CheckoutView): string =>
  `<script type="application/json">${JSON.stringify(view).replace(/</g, '\\u003c')}</script>`;

/**
 * The hosted page: the widget full-screen. `paymentUrl` may be relative to
 * the page (the hosted page gives its own). `widgetSrc` is the versioned
 * module URL; `preload` the language chunk the payment will need; `view`
 * the checkout view as of this request, inlined; `element` the same
 * `<crypto-checkout>` with that view already rendered (first-view.ts), used
 * instead of the empty element when the server could render it.
 */
export function checkoutPage(
  paymentUrl: string,
  lang: string,
  widgetSrc = `/widget/${ENTRY}`,
  preload: string | null = null,
  view: CheckoutView | null = null,
  element: string | null = null,
): string {
  const body = element ?? `<crypto-checkout payment-url="${escapeAttr(paymentUrl)}" full-page>${view ? inlinedView(view) : ''}</crypto-checkout>`;
  return `<!doctype html>
<html lang="${escapeAttr(lang)}"${lang === 'ar' ? ' dir="rtl"' : ''}><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex"><title>Checkout</title>
<style>html,body{margin:0;min-height:100%;background:#f2f4f7}crypto-checkout{display:block;min-height:100vh}</style>
<link rel="modulepreload" href="${escapeAttr(widgetSrc)}"><script type="module" src="${escapeAttr(widgetSrc)}"></script>${preload ? `\n<link rel="modulepreload" href="${escapeAttr(preload)}">` : ''}</head>
<body>${body}</body></html>`;
}

const htmlPage = (title: string, text: string) =>
  `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><p>${text}</p></html>`;

function sendAsset(request: FastifyRequest, reply: FastifyReply, file: Asset, cacheControl: string) {
  const accept = String(request.headers['accept-encoding'] ?? '');
  const encoding: Encoding | null = /\bbr\b/.test(accept) ? 'br' : /\bgzip\b/.test(accept) ? 'gzip' : null;
  const etag = `"${file.hash}${encoding ? `-${encoding}` : ''}"`;
  reply
    .header('etag', etag)
    .header('cache-control', cacheControl)
    .header('vary', 'accept-encoding')
    .header('access-control-allow-origin', '*')
    .type('text/javascript; charset=utf-8');
  const ifNoneMatch = String(request.headers['if-none-match'] ?? '');
  if (ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) return reply.code(304).send();
  if (encoding) reply.header('content-encoding', encoding);
  return reply.send(encoding ? file.encoded(encoding) : file.identity);
}

export function checkoutRoutes(app: FastifyInstance, deps: Deps): void {
  const widget = loadWidgetAssets();
  if (!widget) app.log.warn({ file: WIDGET_FILE }, 'widget bundle missing: run `npm run build:widget`');
  const entryHash = widget?.get(ENTRY)?.hash;
  const widgetSrc = entryHash ? `/widget/${ENTRY}?v=${entryHash}` : `/widget/${ENTRY}`;
  const localeChunk = (language: string) => [...(widget?.keys() ?? [])].find((n) => n.startsWith(`locale-${language}-`));

  app.get<{ Params: { token: string } }>(
    '/checkout/:token',
    { helmet: { frameguard: false, contentSecurityPolicy: false, crossOriginEmbedderPolicy: false } },
    async (request, reply) => {
      const { token } = request.params;
      // The module is asked for with the response headers, before the browser parses the page.
      reply.header('content-security-policy', CHECKOUT_CSP).header('cache-control', 'no-store').header('link', `<${widgetSrc}>; rel=modulepreload`);
      const html = request.headers.accept?.includes('text/html');
      try {
        // The page costs what the checkout API's `get` costs, so it counts against the same limits.
        await deps.limits.consume(deps.limits.checkoutIp, request.ip);
        if (TOKEN_RE.test(token)) await deps.limits.consume(deps.limits.checkoutToken, token);
      } catch (error) {
        if (!(error instanceof RateLimitedError) || !html) throw error;
        return reply.code(429).headers(error.headers).type('text/html; charset=utf-8').send(htmlPage('Too many requests', error.message));
      }
      const row = await findPaymentByToken(deps, token);
      if (!row) {
        // A person following a bad link gets a page; a program gets problem+json like everywhere else.
        if (!html) return sendProblem(reply, problem(404, 'NOT_FOUND', 'No checkout with this token.'));
        return reply.code(404).type('text/html; charset=utf-8').send(htmlPage('Not found', 'This checkout link is not valid.'));
      }
      // The language the widget will speak (English for an unsupported locale).
      const lang = localeLanguage(row.locale) ?? 'en';
      const chunk = localeChunk(lang);
      reply.type('text/html; charset=utf-8');
      // Pricing a NEW payment's options needs the rates: if they fail, the page still loads and the widget asks itself.
      const view = await checkoutView(deps, row).catch((error: unknown) => {
        request.log.warn({ err: error }, 'checkout view not inlined');
        return null;
      });
      // Relative to the page itself: the widget calls the API on the origin (and path prefix) the
      // customer reached, whatever PUBLIC_URL says — the page's CSP allows only 'self', so a page
      // served under a second host name must not call PUBLIC_URL's. (`./` when the URL ends in a slash.)
      const self = request.url.split('?')[0]!.endsWith('/') ? './' : `./${token}`;
      // The first view rendered here too, so the browser paints it before the module runs; without it
      // (a rendering error) the page is still whole: the module renders the inlined view itself.
      const element = view
        ? await renderCheckoutElement(view, self, inlinedView(view)).catch((error: unknown) => {
            request.log.warn({ err: error }, 'checkout first view not rendered');
            return null;
          })
        : null;
      return checkoutPage(self, lang, widgetSrc, chunk ? `/widget/${chunk}` : null, view, element);
    },
  );

  app.get<{ Params: { file: string }; Querystring: { v?: string } }>(
    '/widget/:file',
    { helmet: { crossOriginResourcePolicy: { policy: 'cross-origin' } } },
    async (request, reply) => {
      const { file } = request.params;
      if (!widget) return sendProblem(reply, problem(503, 'WIDGET_NOT_BUILT', 'The widget bundle is missing; run npm run build:widget.'));
      const found = widget.get(file);
      if (!found) return sendProblem(reply, problem(404, 'NOT_FOUND', `No widget file ${file}.`));
      const immutable = file !== ENTRY || request.query.v === found.hash;
      return sendAsset(request, reply, found, immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=3600, stale-while-revalidate=604800');
    },
  );
}
