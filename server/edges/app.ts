/**
 * Builds the Fastify instance: body parsing and limits, security headers,
 * problem+json errors, metrics, REST routes, tRPC, the checkout and docs.
 * `createServer` returns `{ app, start, stop }` so tests run real instances.
 */
import helmet from '@fastify/helmet';
import { fastifyTRPCPlugin, type FastifyTRPCPluginOptions } from '@trpc/server/adapters/fastify';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { AccessLog } from './access-log.js';
import { checkoutRoutes } from './checkout/checkout-page.js';
import type { Deps } from '../deps.js';
import { createLogger } from '../platform/logger.js';
import { validationFailed } from '../platform/errors.js';
import { metricsRoute, registerMetrics } from './rest/metrics.js';
import { registerChainMetrics } from './rest/chain-metrics.js';
import { openApiDocument } from './rest/openapi.js';
import { clientErrorHandler, frameworkErrors, problem, registerProblemHandlers, sendProblem } from './rest/problem.js';
import { paymentRoutes } from './rest/payment-routes.js';
import { testHelperRoutes } from './rest/test-helper-routes.js';
import { withdrawalRoutes } from './rest/withdrawal-routes.js';
import { metadataRoutes } from './rest/metadata-routes.js';
import { registerDocsAssets } from './rest/docs.js';
import { answersJson, registerRoutes, type AnyRoute } from './rest/route.js';
import { duplicateKey } from './rest/duplicate-keys.rules.js';
import { systemRoutes } from './rest/system-routes.js';
import type { Registry } from 'prom-client';
import { appRouter, type AppRouter } from './trpc/app-router.js';
import { checkoutContextFactory, contextFactory } from './trpc/context.js';
import cors from '@fastify/cors';
import { checkoutRouter, type CheckoutRouter } from './checkout/checkout-router.js';
import { LiveUpdates } from '../modules/payments/index.js';

/** Largest accepted request body (CONTRACT §3). */
export const BODY_LIMIT = 64 * 1024;

/** Methods that carry no body here: their content-type, if any, is not looked at. */
const BODILESS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * tRPC's adapter brings its own parser for multipart bodies (FormData
 * inputs), which this API never uses: refuse any non-JSON body with 415
 * before it gets there, whatever the method (a PUT with a multipart body
 * reached that parser, which failed with a 500: the soak's fuzzing found it).
 */
function jsonOnly(scope: FastifyInstance): void {
  scope.addHook('onRequest', async (request, reply) => {
    const type = request.headers['content-type'];
    if (!BODILESS.has(request.method) && type !== undefined && !/^application\/json\s*(;|$)/i.test(type)) {
      return sendProblem(reply, problem(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json.'));
    }
  });
}

/**
 * The methods a tRPC scope answers; any other gets 405 with `Allow`, as problem+json, before tRPC's
 * adapter, which answered them 415 in text/plain (OPTIONS /trpc/… from a browser, PUT, DELETE).
 */
function allowMethods(scope: FastifyInstance, methods: readonly string[]): void {
  const allow = methods.join(', ');
  scope.addHook('onRequest', async (request, reply) => {
    if (!methods.includes(request.method)) {
      return sendProblem(reply, problem(405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${request.url.split('?')[0]}; use ${allow}.`), { allow });
    }
  });
}

export type ServerOptions = {
  deps: Deps;
  logger?: boolean | { stream: NodeJS.WritableStream };
  /** Check every 200 answer of the REST route table against its response schema (tests turn this on). */
  checkResponses?: boolean;
};

export type KassaServer = {
  app: FastifyInstance;
  /** The REST route table: what is served and what /openapi.json documents. */
  routes: readonly AnyRoute[];
  /** The /metrics registry: the composition root may register more gauges (e.g. per-network chain state). */
  metrics: Registry;
  start: () => Promise<string>;
  stop: () => Promise<void>;
};

/** Every REST operation, in the order /docs lists them. */
export function restRoutes(deps: Deps, metrics: Registry, openApi: () => Record<string, unknown>): AnyRoute[] {
  return [
    ...paymentRoutes(deps),
    ...withdrawalRoutes(deps),
    ...metadataRoutes(deps),
    ...testHelperRoutes(deps),
    ...systemRoutes(deps, openApi),
    metricsRoute(metrics, deps.config.metricsToken, deps.config.trustProxy !== false),
  ];
}

/** Plain JSON.parse accepts `__proto__` keys (as own properties); the secure parser refuses them. */
const isValidJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** Trust the nearest `hops` proxies (what Fastify does for a number; its types take a function). */
const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

export async function createServer({ deps, logger, checkResponses = false }: ServerOptions): Promise<KassaServer> {
  const app = Fastify({
    bodyLimit: BODY_LIMIT,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    frameworkErrors,
    clientErrorHandler,
    logController: new AccessLog(),
    // The client's address (lockouts, checkout limits, /metrics' loopback rule) is the socket's unless
    // the operator names the proxies in front (KASSA_TRUST_PROXY).
    trustProxy: typeof deps.config.trustProxy === 'number' ? trustHops(deps.config.trustProxy) : deps.config.trustProxy,
    // The process's logger (shared with the worker), or a logger of the test's own options.
    ...(logger === false
      ? { logger: false }
      : { loggerInstance: (typeof logger === 'object' ? createLogger(deps.config.logLevel, logger) : deps.log) as FastifyBaseLogger }),
  });

  // Only JSON bodies exist in this API; anything else is 415. The raw text is
  // kept because the signature covers the exact bytes sent.
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    request.rawBody = body as string;
    parseJson(request, body as string, (error, value) => {
      // `__proto__` or `constructor.prototype` is refused by the parser itself (prototype poisoning):
      // valid JSON, so it is named like any other unknown key (CONTRACT §3), not called malformed.
      if (error && isValidJson(body as string)) {
        const key = /"__proto__"\s*:/.test(body as string) ? '__proto__' : 'constructor';
        done(validationFailed([{ field: key, message: 'unknown field: a key named __proto__, or constructor with a prototype, is never accepted' }]), undefined);
        return;
      }
      // Read last-wins here and first-wins elsewhere, a repeated key would mean two requests in one.
      const repeated = error ? null : duplicateKey(body as string);
      if (repeated !== null) {
        done(validationFailed([{ field: repeated, message: 'given twice in one object: send each key once' }]), undefined);
        return;
      }
      done(error, value);
    });
  });
  // Callback-style hooks: an async one costs a promise per request on the hot paths.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    done(null, payload);
  });

  registerProblemHandlers(app);
  const metrics = registerMetrics(app, deps);
  if (deps.chainHealth) registerChainMetrics(metrics, deps.chainHealth);

  let doc: Record<string, unknown> | undefined;
  const routes = restRoutes(deps, metrics, () => doc!);
  doc = openApiDocument(deps.config.publicUrl, routes);
  // A JSON answer's security headers never vary: its routes set one constant object (rest/route.ts)
  // and sit outside helmet's scope. helmet's two onRequest hooks run on every request of the scope
  // they are registered in, even for a route that opts out (~2% of the create's CPU in a profile).
  registerRoutes(app, deps, routes.filter(answersJson), { checkResponses });
  const live = new LiveUpdates(deps.database.sql);
  await live.start();
  app.addHook('onClose', async () => live.stop());

  // Everything else: documents, scripts, metrics and the tRPC procedures, with helmet's headers.
  await app.register(async (documents) => {
    await documents.register(helmet, { global: true });
    registerRoutes(documents, deps, routes.filter((route) => !answersJson(route)), { checkResponses });
    registerDocsAssets(documents);
    checkoutRoutes(documents, deps);

    await documents.register(async (scope) => {
      // Called by tools, not by browsers on other origins: no CORS, so no OPTIONS either.
      allowMethods(scope, ['GET', 'HEAD', 'POST']);
      jsonOnly(scope);
      await scope.register(fastifyTRPCPlugin, {
        prefix: '/trpc',
        trpcOptions: {
          router: appRouter,
          createContext: contextFactory(deps),
          onError: ({ error, path }) => {
            if (error.code === 'INTERNAL_SERVER_ERROR') app.log.error({ err: error.cause ?? error, path }, 'trpc procedure failed');
          },
        } satisfies FastifyTRPCPluginOptions<AppRouter>['trpcOptions'],
      });
    });

    // The checkout API is public and called from merchants' pages: CORS open, no credentials.
    // Registered under its prefix so that CORS (and its OPTIONS routes) exist only there.
    await documents.register(
      async (scope) => {
        await scope.register(cors, { origin: '*', methods: ['GET', 'POST'], maxAge: 86400 });
        // After CORS's own hook, which answers a preflight OPTIONS first.
        allowMethods(scope, ['GET', 'HEAD', 'POST', 'OPTIONS']);
        jsonOnly(scope);
        await scope.register(fastifyTRPCPlugin, {
          prefix: '',
          trpcOptions: {
            router: checkoutRouter,
            createContext: checkoutContextFactory(deps, live, deps.limits),
          } satisfies FastifyTRPCPluginOptions<CheckoutRouter>['trpcOptions'],
        });
      },
      { prefix: '/checkout/api' },
    );
  });

  return {
    app,
    routes,
    metrics,
    start: async () => app.listen({ port: deps.config.port, host: deps.config.host }),
    stop: () => app.close(),
  };
}
