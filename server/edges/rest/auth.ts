/**
 * Merchant request authentication (CONTRACT §2) as a Fastify preHandler:
 * parse the KASSA-API header, check the clock, find the key, verify the
 * HMAC over the raw body in constant time, then the scope. Missing, bad,
 * unknown, revoked or wrongly signed → 401; valid key without the scope → 403.
 */
import { eq, sql } from 'drizzle-orm';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { LRUCache } from 'lru-cache';
import { preparedPerPool } from '../../../db/client.js';
import { apiKeys, businesses } from '../../../db/schema.js';
import type { Business, CallerProof } from '../../modules/businesses/index.js';
import type { Deps } from '../../deps.js';
import { forbidden, KassaError, unauthorized } from '../../platform/errors.js';
import type { Scope } from '../../modules/money/index.js';
import { safeEqual } from '../../platform/secrets.js';
import { cachedSecret } from '../../platform/secret-cache.js';
import { MAX_CLOCK_SKEW_S, diagnoseAuthorization, parseAuthorization, sign, signedStringShape } from './signature.rules.js';

/**
 * The verified caller, with its business as read in the same query (the request's view of its settings).
 * `proof` is set when key and business came from this process's cache and the operation's own
 * statement must confirm them (modules/businesses/caller-proof.ts); absent, they were read just now.
 */
export type ApiCaller = { apiKeyId: string; apiKey: string; businessId: string; scopes: readonly string[]; business: Business; proof?: CallerProof };

/** How an operation has its caller confirmed: by reading the key row first, or inside its own statement. */
export type Confirmation = 'READ_KEY' | 'IN_STATEMENT';

declare module 'fastify' {
  interface FastifyRequest {
    /** The raw body as received, for signature verification ('' when there is none). */
    rawBody?: string;
    caller?: ApiCaller;
  }
}

type Parsed = NonNullable<ReturnType<typeof parseAuthorization>>;

export async function authenticate(deps: Deps, request: FastifyRequest, confirmation: Confirmation = 'READ_KEY'): Promise<ApiCaller> {
  const parsed = parseAuthorization(request.headers.authorization);
  await deps.limits.assertAddressNotBlocked(request.ip);
  try {
    if (!parsed) throw unauthorized(diagnoseAuthorization(request.headers.authorization));
    assertFresh(deps, parsed);
    return (confirmation === 'IN_STATEMENT' ? fromCache(deps, request, parsed) : null) ?? (await verify(deps, request, parsed));
  } catch (error) {
    // Only a refused credential counts: a database outage must not lock merchants out. A key locked by
    // failures refuses only wrong signatures (429 instead of 401): its owner's signed requests pass.
    if (error instanceof KassaError && error.status === 401) {
      await deps.limits.assertKeyNotBlocked(parsed?.apiKey ?? null);
      await deps.limits.recordAuthFailure(request.ip, parsed?.apiKey ?? null);
    }
    throw error;
  }
}

function assertFresh(deps: Deps, parsed: Parsed): void {
  const serverNow = Math.floor(deps.now().getTime() / 1000);
  const skew = Math.abs(serverNow - parsed.timestamp);
  if (skew > MAX_CLOCK_SKEW_S) {
    throw unauthorized(
      `timestamp=${parsed.timestamp} is ${skew} s away from the server clock (${serverNow}); at most ${MAX_CLOCK_SKEW_S} s is accepted. ` +
        'Send the current UNIX time in seconds and keep the clock synchronised (NTP).',
    );
  }
}

/** Whether the request is signed with the key whose sealed secret is `secretEnc` (constant-time). */
function signedWith(deps: Deps, request: FastifyRequest, parsed: Parsed, secretEnc: string): boolean {
  const expected = sign(cachedSecret(deps.masterKey, secretEnc), String(parsed.timestamp), request.method, request.url, request.rawBody ?? '');
  return safeEqual(expected, parsed.signature);
}

/** The key and its business in one round trip, with their row versions, as a prepared query (no SQL rebuilt per request). */
const keyQuery = preparedPerPool((db) =>
  db
    .select({ key: apiKeys, business: businesses, keyVersion: sql<string>`${apiKeys}.xmin::text`, businessVersion: sql<string>`${businesses}.xmin::text` })
    .from(apiKeys)
    .innerJoin(businesses, eq(businesses.id, apiKeys.businessId))
    .where(eq(apiKeys.key, sql.placeholder('key')))
    .prepare('kassa_api_key'),
);

/** The key row and its business read now; the request's signature checked against them. */
async function verify(deps: Deps, request: FastifyRequest, parsed: Parsed): Promise<ApiCaller> {
  // The key row is read here on every request but the hot ones, which confirm the cached row in their
  // own statement (IN_STATEMENT): either way a revoked key is refused from the moment the revocation
  // commits. The decrypted secret is cached too (platform/secret-cache.ts).
  const [found] = await keyQuery(deps.database.db).execute({ key: parsed.apiKey });
  if (found && !found.key.revokedAt) remember(deps, found);
  else forget(deps, parsed.apiKey);
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
  if (!signedWith(deps, request, parsed, key.secretEnc)) throw invalid();
  return { apiKeyId: key.id, apiKey: key.key, businessId: key.businessId, scopes: key.scopes, business };
}

type CachedKey = { key: typeof apiKeys.$inferSelect; business: Business; keyVersion: string; businessVersion: string };

/** Enough for every active key of a large installation; the least recently used goes first. */
export const KEY_CACHE_SIZE = 1000;
const keyCaches = new WeakMap<object, LRUCache<string, CachedKey>>();
const keyCache = (deps: Deps) => {
  let cache = keyCaches.get(deps.database);
  if (!cache) keyCaches.set(deps.database, (cache = new LRUCache<string, CachedKey>({ max: KEY_CACHE_SIZE })));
  return cache;
};

function remember(deps: Deps, found: CachedKey): void {
  keyCache(deps).set(found.key.key, found);
}

/** Drop a key from this process's cache (a stale proof, a refused or revoked key). */
export function forget(deps: Deps, apiKey: string): void {
  keyCache(deps).delete(apiKey);
}

/**
 * A caller from the cache, with the proof its operation's statement checks, when the signature
 * verifies with the cached secret; null sends the request to the key row (a miss, or a signature
 * that only a changed key could explain).
 */
function fromCache(deps: Deps, request: FastifyRequest, parsed: Parsed): ApiCaller | null {
  const hit = keyCache(deps).get(parsed.apiKey);
  if (!hit || !signedWith(deps, request, parsed, hit.key.secretEnc)) return null;
  const { key, business } = hit;
  return {
    apiKeyId: key.id, apiKey: key.key, businessId: key.businessId, scopes: key.scopes, business,
    proof: { apiKeyId: key.id, keyVersion: hit.keyVersion, businessVersion: hit.businessVersion },
  };
}

/**
 * preHandler requiring a valid signature and, when given, a scope. IN_STATEMENT: the handler's
 * statement confirms a cached caller (route.ts authenticates afresh if it was stale).
 */
export function requireApiKey(deps: Deps, scope?: Scope, confirmation: Confirmation = 'READ_KEY'): preHandlerAsyncHookHandler {
  return async (request) => {
    let caller = await authenticate(deps, request, confirmation);
    // A cached key without the scope may have been granted it since: only the key row can refuse.
    if (scope && caller.proof && !caller.scopes.includes(scope)) caller = await authenticate(deps, request);
    if (scope && !caller.scopes.includes(scope)) {
      throw forbidden('FORBIDDEN_SCOPE', `This API key lacks the ${scope} scope.`);
    }
    request.caller = caller;
  };
}
