/**
 * Merchant request authentication (CONTRACT §2) as a Fastify preHandler:
 * parse the KASSA-API header, check the clock, find the key, verify the
 * HMAC over the raw body in constant time, then the scope. Missing, bad,
 * unknown, revoked or wrongly signed → 401; valid key without the scope → 403.
 */
import { eq, sql } from 'drizzle-orm';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { preparedPerPool } from '../../../db/client.js';
import { apiKeys, businesses } from '../../../db/schema.js';
import type { Business } from '../../modules/businesses/index.js';
import type { Deps } from '../../deps.js';
import { forbidden, KassaError, unauthorized } from '../../platform/errors.js';
import type { Scope } from '../../modules/money/index.js';
import { safeEqual } from '../../platform/secrets.js';
import { cachedSecret } from '../../platform/secret-cache.js';
import { MAX_CLOCK_SKEW_S, diagnoseAuthorization, parseAuthorization, sign, signedStringShape } from './signature.rules.js';

/** The verified caller, with its business as read in the same query (the request's view of its settings). */
export type ApiCaller = { apiKeyId: string; apiKey: string; businessId: string; scopes: readonly string[]; business: Business };

declare module 'fastify' {
  interface FastifyRequest {
    /** The raw body as received, for signature verification ('' when there is none). */
    rawBody?: string;
    caller?: ApiCaller;
  }
}

export async function authenticate(deps: Deps, request: FastifyRequest): Promise<ApiCaller> {
  const parsed = parseAuthorization(request.headers.authorization);
  await deps.limits.assertNotBlocked(request.ip, parsed?.apiKey ?? null);
  try {
    return await verify(deps, request, parsed);
  } catch (error) {
    // Only a refused credential counts: a database outage must not lock merchants out.
    if (error instanceof KassaError && error.status === 401) await deps.limits.recordAuthFailure(request.ip, parsed?.apiKey ?? null);
    throw error;
  }
}

/** The key and its business in one round trip, as a prepared query (no SQL rebuilt per request). */
const keyQuery = preparedPerPool((db) =>
  db
    .select({ key: apiKeys, business: businesses })
    .from(apiKeys)
    .innerJoin(businesses, eq(businesses.id, apiKeys.businessId))
    .where(eq(apiKeys.key, sql.placeholder('key')))
    .prepare('kassa_api_key'),
);

async function verify(deps: Deps, request: FastifyRequest, parsed: ReturnType<typeof parseAuthorization>): Promise<ApiCaller> {
  if (!parsed) throw unauthorized(diagnoseAuthorization(request.headers.authorization));
  const serverNow = Math.floor(deps.now().getTime() / 1000);
  const skew = Math.abs(serverNow - parsed.timestamp);
  if (skew > MAX_CLOCK_SKEW_S) {
    throw unauthorized(
      `timestamp=${parsed.timestamp} is ${skew} s away from the server clock (${serverNow}); at most ${MAX_CLOCK_SKEW_S} s is accepted. ` +
        'Send the current UNIX time in seconds and keep the clock synchronised (NTP).',
    );
  }
  // The key row is read on every request, never cached: a revoked key is refused from the moment the
  // revocation commits (only the decrypted secret is cached, platform/secret-cache.ts).
  const [found] = await keyQuery(deps.database.db).execute({ key: parsed.apiKey });
  // The same answer for unknown and revoked keys and bad signatures: no oracle for key existence.
  // It shows the string the server verified (from the request's own parts), never the secret or the expected signature.
  const invalid = () =>
    unauthorized(
      'Invalid API key or signature. The signature must be the lowercase hex HMAC-SHA256, keyed with the API secret, of the UTF-8 string ' +
        `${signedStringShape(String(parsed.timestamp), request.method, request.url, request.rawBody ?? '')} ` +
        '(timestamp, method, path with query string and raw body, joined by \\n).',
    );
  if (!found || found.key.revokedAt) throw invalid();
  const { key, business } = found;
  const expected = sign(cachedSecret(deps.masterKey, key.secretEnc), String(parsed.timestamp), request.method, request.url, request.rawBody ?? '');
  if (!safeEqual(expected, parsed.signature)) throw invalid();
  return { apiKeyId: key.id, apiKey: key.key, businessId: key.businessId, scopes: key.scopes, business };
}

/** preHandler requiring a valid signature and, when given, a scope. */
export function requireApiKey(deps: Deps, scope?: Scope): preHandlerAsyncHookHandler {
  return async (request) => {
    const caller = await authenticate(deps, request);
    if (scope && !caller.scopes.includes(scope)) {
      throw forbidden('FORBIDDEN_SCOPE', `This API key lacks the ${scope} scope.`);
    }
    request.caller = caller;
  };
}
