/**
 * The one tRPC root: `router`, the base procedures, `createCallerFactory`.
 * Authorization lives in the base procedures, never in handlers; domain
 * errors (KassaError) are mapped to tRPC codes here, once.
 */
import { initTRPC, TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY, type TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { z, ZodError } from 'zod';
import { KassaError } from '../../platform/errors.js';
import { fieldErrors } from '../../platform/validate.js';
import type { Context } from './context.js';

const CODES: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: 'BAD_REQUEST', 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE', 422: 'UNPROCESSABLE_CONTENT', 429: 'TOO_MANY_REQUESTS',
};

const t = initTRPC.context<Context>().create({
  // Never put stack traces in answers, whatever NODE_ENV says.
  isDev: false,
  // Keep checkout subscriptions alive through proxies, and let clients notice a dead stream.
  sse: { ping: { enabled: true, intervalMs: 15_000 }, client: { reconnectAfterInactivityMs: 40_000 } },
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    // Errors thrown inside a subscription's generator skip the middleware below: map them here too.
    if (cause instanceof KassaError && error.code === 'INTERNAL_SERVER_ERROR') {
      const code = CODES[cause.status] ?? 'INTERNAL_SERVER_ERROR';
      return {
        ...shape,
        code: TRPC_ERROR_CODES_BY_KEY[code],
        message: cause.message,
        data: { code, httpStatus: cause.status, path: shape.data.path, kassaCode: cause.code, fieldErrors: undefined },
      };
    }
    return {
      ...shape,
      // Never leak internals: domain errors keep their message; an input error says so in one sentence
      // (zod's own message is its issue list, patterns included) and names the fields in fieldErrors.
      message: error.code === 'INTERNAL_SERVER_ERROR' ? 'Internal error' : cause instanceof ZodError ? 'The request is invalid.' : shape.message,
      data: {
        code: shape.data.code,
        httpStatus: shape.data.httpStatus,
        path: shape.data.path,
        kassaCode: cause instanceof KassaError ? cause.code : cause instanceof ZodError ? 'VALIDATION_FAILED' : undefined,
        // The REST API's field errors: one entry per unknown key, named.
        fieldErrors: cause instanceof ZodError ? fieldErrors(cause) : undefined,
      },
    };
  },
});

/** Turn a thrown KassaError into the matching TRPCError (keeping it as the cause). */
const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof KassaError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: CODES[cause.status] ?? 'INTERNAL_SERVER_ERROR', message: cause.message, cause });
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure.use(domainErrors);

export const operatorProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.operator) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'An operator bearer token is required.' });
  return next({ ctx: { ...ctx, operator: ctx.operator } });
});

export const adminProcedure = operatorProcedure.use(({ ctx, next }) => {
  if (ctx.operator.role !== 'admin') throw new TRPCError({ code: 'FORBIDDEN', message: 'This needs the admin role.' });
  return next();
});

/**
 * A public checkout procedure, keyed by the checkout token, rate limited per token and per
 * address. Its whole input is one strict object (the token and `fields`): tRPC parses every
 * stacked `.input()` against the whole input, so a strict base holding only the token would
 * refuse the leaf's fields, and a loose one would let unknown keys through.
 */
export function checkoutProcedure<F extends z.ZodRawShape = {}>(fields: F = {} as F) {
  return publicProcedure.input(z.strictObject({ token: z.string().max(64), ...fields })).use(async ({ ctx, input, next }) => {
    const { token } = input as { token: string };
    if (ctx.limits) {
      await ctx.limits.consume(ctx.limits.checkoutIp, ctx.ip ?? 'unknown');
      await ctx.limits.consume(ctx.limits.checkoutToken, token);
    }
    return next();
  });
}
