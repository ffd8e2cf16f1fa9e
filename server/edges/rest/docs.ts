/**
 * The rendered API reference at GET /docs: Swagger UI (npm `swagger-ui-dist`,
 * a static bundle) served by Kassa itself from node_modules, no CDN, drawing
 * GET /openapi.json. The page's script is a file of its own, because the
 * Content-Security-Policy allows scripts from this origin only (no inline).
 * Also the favicon.
 */
import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { faviconIco, FAVICON_SVG } from './favicon.rules.js';

/** The bundle files /docs needs, read on their first request and kept (about 1.6 MB, the same for every request). */
const ASSETS = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
} as const;

const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayOperationId: false,
    // Requests must be signed (see Authentication): the page documents, it does not send.
    supportedSubmitMethods: [],
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout'
  });
});
`;

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>Kassa API reference</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<noscript><p>This reference needs JavaScript. The machine-readable document is <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p></noscript>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

export { DOCS_HTML };

function swaggerUiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/** The reference page's assets and the favicon (the page itself and /openapi.json are route-table entries). */
export function registerDocsAssets(app: FastifyInstance): void {
  const dir = swaggerUiDir();
  for (const [file, type] of Object.entries(ASSETS)) {
    // Read when first asked for, not at start: most processes never serve /docs, and the bundle
    // held as a string is ~3 MB of heap (its non-Latin-1 characters make it two bytes a character).
    let body: Buffer | undefined;
    app.get(`/docs/${file}`, async (_request, reply) => {
      // The bundle references its source map; strip the comment so a browser does not ask for a file we do not serve.
      body ??= Buffer.from(readFileSync(join(dir, file), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$|\/\*# sourceMappingURL=\S+ \*\/\s*$/, '\n'));
      return reply.type(type).header('cache-control', 'public, max-age=86400').send(body);
    });
  }
  app.get('/docs/init.js', async (_request, reply) => reply.type('application/javascript; charset=utf-8').send(INIT_SCRIPT));
  const ico = faviconIco();
  app.get('/favicon.ico', async (_request, reply) => reply.type('image/x-icon').header('cache-control', 'public, max-age=604800').send(ico));
  app.get('/favicon.svg', async (_request, reply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=604800').send(FAVICON_SVG));
}
