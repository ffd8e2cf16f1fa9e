/**
 * The REST route table's shape: one entry per operation holds its method,
 * path, scope, the zod schemas of its path, query, body and 200 response,
 * the errors it can answer, and its handler. `registerRoutes` mounts the
 * entries in Fastify (authentication, strict parsing, optional response
 * checking) and `openapi.ts` writes the OpenAPI document from the same
 * entries, so what is documented is what is served.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import { KassaError, notFound } from '../../platform/errors.js';
import { fieldErrors, parseInput } from '../../platform/validate.js';
import { API_SECURITY_HEADERS } from './problem.js';
import type { Scope } from '../../modules/money/index.js';
import { StaleCallerError } from '../../modules/businesses/index.js';
import { forget, requireApiKey, type ApiCaller } from './auth.js';
import { consumeSignature, mayRetrySame } from './single-use.js';

/** Who may call: a key with this scope, any valid key, or anyone. */
export type RouteAuth = Scope | 'ANY_KEY' | 'NONE';

/** A refusal the operation can answer besides the common ones (problem+json). */
export type ErrorCase = { status: number; code: string; when: string };

/** Refusals several operations share. */
export const SHARED_ERRORS = {
  forbiddenBusiness: { status: 403, code: 'FORBIDDEN_BUSINESS', when: 'businessId is not the API key’s business' },
  idempotency: (idField: string): ErrorCase => ({ status: 409, code: 'IDEMPOTENCY_CONFLICT', when: `${idField} was already used with a different body` }),
  networkNotEnabled: { status: 422, code: 'NETWORK_NOT_ENABLED', when: 'live mode: the network has no node configured' },
  networkUnavailable: { status: 503, code: 'NETWORK_UNAVAILABLE', when: 'live mode: the network is configured but its node has not answered since start (Retry-After)' },
  ratesUnavailable: { status: 503, code: 'RATES_UNAVAILABLE', when: 'no quorum of fresh market rates (Retry-After)' },
  notFound: { status: 404, code: 'NOT_FOUND', when: 'no such record for this business' },
} as const satisfies Record<string, ErrorCase | ((field: string) => ErrorCase)>;

export type RouteInput<P, Q, B> = {
  params: P;
  query: Q;
  body: B;
  /** The verified caller (undefined only for `auth: 'NONE'`). */
  caller: ApiCaller;
  request: FastifyRequest;
  reply: FastifyReply;
};

export type RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R extends z.ZodType> = {
  method: 'GET' | 'POST' | 'DELETE';
  /** Fastify form: `/v1/payments/:paymentId`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  /** Markdown shown under the summary in /docs. */
  description?: string;
  auth: RouteAuth;
  /**
   * The handler's statement confirms a caller from the key cache (`caller.proof`,
   * modules/businesses/caller-proof.ts) instead of the key row being read first.
   */
  confirmsCaller?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** The 200 answer. */
  response: R;
  /** Media type of the 200 answer (default application/json; its schema then describes the text). */
  responseType?: string;
  /** Refusals specific to this operation; authentication, validation and rate-limit errors are added for every route that has them. */
  errors?: readonly ErrorCase[];
  /**
   * The operation has no idempotency key, so a replay of its signed request would run it again:
   * each signature is accepted once (single-use.ts), a second use is 401.
   */
  singleUse?: boolean;
  deprecated?: boolean;
  /** Headers the 200 answer carries (name → description). */
  responseHeaders?: Record<string, string>;
  /** Shown in /docs; checked against the schemas by the OpenAPI tests. */
  example?: { request?: unknown; response?: unknown };
  handler: (input: RouteInput<z.output<P>, z.output<Q>, z.output<B>>) => Promise<unknown>;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteSpec<any, any, any, any>;

/** Keeps the schemas' types flowing into the handler. */
export function defineRoute<
  R extends z.ZodType,
  P extends z.ZodType = z.ZodUndefined,
  Q extends z.ZodType = z.ZodUndefined,
  B extends z.ZodType = z.ZodUndefined,
>(spec: RouteSpec<P, Q, B, R>): AnyRoute {
  return spec;
}

/** `/v1/payments/:paymentId` → `/v1/payments/{paymentId}`. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z]+)/g, '{$1}');

const pathParams = (path: string) => [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);

/** A response that does not match its route's schema: only raised when responses are checked (tests). */
export class ResponseContractError extends KassaError {
  constructor(route: AnyRoute, error: z.ZodError) {
    super(500, 'RESPONSE_CONTRACT_VIOLATION', `${route.method} ${route.path} answered outside its schema: ${JSON.stringify(fieldErrors(error))}`);
  }
}

export type RegisterOptions = {
  /** Validate every 200 answer (as it goes on the wire) against the route's response schema: on in tests. */
  checkResponses?: boolean;
};

function setApiSecurityHeaders(_request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.headers(API_SECURITY_HEADERS);
  done();
}

/** A route answering JSON: its security headers are one constant set, with no helmet (edges/app.ts). */
export const answersJson = (route: AnyRoute) => !route.responseType || route.responseType.startsWith('application/json');

const scopeOf = (route: AnyRoute) => (route.auth === 'ANY_KEY' || route.auth === 'NONE' ? undefined : route.auth);

export function registerRoutes(app: FastifyInstance, deps: Deps, routes: readonly AnyRoute[], options: RegisterOptions = {}): void {
  for (const route of routes) {
    const names = pathParams(route.path);
    const json = answersJson(route);
    app.route({
      method: route.method,
      url: route.path,
      // A JSON answer's security headers never vary: one constant object instead of helmet's hooks
      // (which, should the route be registered where helmet is, it also opts out of).
      ...(json ? { helmet: false, onRequest: setApiSecurityHeaders } : {}),
      ...(route.auth === 'NONE' ? {} : { preHandler: requireApiKey(deps, scopeOf(route), route.confirmsCaller ? 'IN_STATEMENT' : 'READ_KEY') }),
      handler: async (request, reply) => {
        const raw = request.params as Record<string, string>;
        // `GET /v1/payments/` reaches `/v1/payments/:paymentId` with an empty id: say what is missing.
        const empty = names.find((name) => !raw[name]);
        if (empty) {
          throw notFound(`${route.method} ${request.url.split('?')[0]} names no ${empty}: use ${openApiPath(route.path)}${route.method === 'GET' && route.path.endsWith(`/:${empty}`) ? ` to read one, or ${route.path.slice(0, -(empty.length + 2))} to list` : ''}.`);
        }
        const params = route.params ? parseInput(route.params, raw, 'path') : undefined;
        const query = route.query ? parseInput(route.query, request.query ?? {}, 'query') : undefined;
        if (!route.query && Object.keys((request.query as object | undefined) ?? {}).length > 0) {
          // No query parameter is known here, so every one given is unknown (CONTRACT §3).
          parseInput(z.strictObject({}), request.query, 'query');
        }
        const body = route.body ? parseInput(route.body, request.body, 'request body') : undefined;
        const run = () => route.handler({ params, query, body, caller: request.caller!, request, reply });
        const runFresh = async () => {
          try {
            return await run();
          } catch (error) {
            if (!(error instanceof StaleCallerError)) throw error;
            // The cached key or business changed: read the key row (which may now refuse), then once more.
            forget(deps, request.caller!.apiKey);
            await requireApiKey(deps, scopeOf(route)).call(app, request, reply);
            return run();
          }
        };
        const giveBack = route.singleUse ? await consumeSignature(deps, request) : null;
        let result: unknown;
        try {
          result = await runFresh();
        } catch (error) {
          // A refusal for the state the request met keeps the signature used: replayed later, a captured
          // request could succeed where it was refused (whitelisting an address after the merchant removed
          // it). Anything else gives it back (single-use.ts, mayRetrySame).
          if (mayRetrySame(error)) await giveBack?.();
          throw error;
        }
        if (options.checkResponses && reply.statusCode === 200) {
          // A JSON route may answer text it already serialised (the payment read cache): check what it says.
          const wire = typeof result === 'string' ? (json ? JSON.parse(result) : result) : JSON.parse(JSON.stringify(result));
          const checked = route.response.safeParse(wire);
          if (!checked.success) throw new ResponseContractError(route, checked.error);
        }
        return result;
      },
    });
  }
}
