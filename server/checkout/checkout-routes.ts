/**
 * The hosted checkout page at `paymentUrl` and the widget module it loads.
 * The page may be framed by any origin (CONTRACT §7), so it carries a CSP
 * with `frame-ancestors *` and nothing else it does not need.
 */
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { payments } from '../../db/schema.js';
import type { Deps } from '../deps.js';
import { problem, sendProblem } from '../http/problem.js';

export const WIDGET_FILE = fileURLToPath(new URL('../../dist/widget/crypto-checkout.js', import.meta.url));

const CHECKOUT_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
  "connect-src 'self'", "font-src 'self'", 'frame-ancestors *', "base-uri 'none'", "form-action 'none'",
].join('; ');

const escapeAttr = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function checkoutPage(paymentUrl: string, lang: string): string {
  return `<!doctype html>
<html lang="${escapeAttr(lang)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Checkout</title>
<style>html,body{margin:0;height:100%}crypto-checkout{display:block;min-height:100%}</style>
<script type="module" src="/widget/crypto-checkout.js"></script></head>
<body><crypto-checkout payment-url="${escapeAttr(paymentUrl)}" full-page></crypto-checkout></body></html>`;
}

/** The widget bundle, read once; an ETag lets browsers revalidate cheaply. */
function loadWidget(): { body: Buffer; etag: string } | null {
  try {
    const body = readFileSync(WIDGET_FILE);
    return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
  } catch {
    return null;
  }
}

export function checkoutRoutes(app: FastifyInstance, deps: Deps): void {
  const widget = loadWidget();
  if (!widget) app.log.warn({ file: WIDGET_FILE }, 'widget bundle missing: run `npm run build:widget`');

  app.get<{ Params: { token: string } }>(
    '/checkout/:token',
    { helmet: { frameguard: false, contentSecurityPolicy: false, crossOriginEmbedderPolicy: false } },
    async (request, reply) => {
      const { token } = request.params;
      const row = /^[A-Za-z0-9_-]{22}$/.test(token)
        ? await deps.database.db.query.payments.findFirst({ where: eq(payments.checkoutToken, token), columns: { locale: true } })
        : undefined;
      reply.header('content-security-policy', CHECKOUT_CSP).header('cache-control', 'no-store');
      if (!row) {
        // A person following a bad link gets a page; a program gets problem+json like everywhere else.
        if (!request.headers.accept?.includes('text/html')) return sendProblem(reply, problem(404, 'NOT_FOUND', 'No checkout with this token.'));
        return reply.code(404).type('text/html; charset=utf-8').send('<!doctype html><html lang="en"><meta charset="utf-8"><title>Not found</title><p>This checkout link is not valid.</p></html>');
      }
      reply.type('text/html; charset=utf-8');
      return checkoutPage(`${deps.config.publicUrl}/checkout/${token}`, row.locale.slice(0, 2).toLowerCase());
    },
  );

  app.get('/widget/crypto-checkout.js', { helmet: { crossOriginResourcePolicy: { policy: 'cross-origin' } } }, async (request, reply) => {
    if (!widget) return sendProblem(reply, problem(503, 'WIDGET_NOT_BUILT', 'The widget bundle is missing; run npm run build:widget.'));
    reply
      .header('etag', widget.etag)
      .header('cache-control', 'public, max-age=3600, stale-while-revalidate=86400')
      .header('access-control-allow-origin', '*')
      .type('text/javascript; charset=utf-8');
    if (request.headers['if-none-match'] === widget.etag) return reply.code(304).send();
    return widget.body;
  });
}
