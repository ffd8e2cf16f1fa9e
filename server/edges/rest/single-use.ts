/**
 * Single-use signed requests. A signature is valid for its whole clock window (±MAX_CLOCK_SKEW_S),
 * and an operation without an idempotency key would run again for each replay of a captured
 * request: whitelisting an address the merchant has since removed, for one. For those routes
 * (`singleUse`), the signature is recorded once, in one statement that also drops the expired
 * ones; a second use is refused with 409 REQUEST_ALREADY_USED (not 401: the credentials are good, and a
 * client that stops on 401 would give up), before the operation runs. A request that fails on
 * Kassa's side (5xx, 429) gets its signature back, so that the same request may be sent again; one
 * refused for the state it met (409, 422) keeps it used: a corrected request is signed anew anyway, and
 * a captured refused request replayed after the state changed (the address removed) must not succeed.
 */
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { conflict, KassaError, unauthorized } from '../../platform/errors.js';
import { MAX_CLOCK_SKEW_S, parseAuthorization } from './signature.rules.js';

/**
 * Whether `error` gives the signature back: anything but a refusal for the state the request met (409,
 * 422), which a replay could pass once that state changed. A failure on Kassa's side (5xx, 429) may be
 * sent again as it is; bad input (400) or an id that does not exist (404) will never succeed, so
 * keeping it would change a row for nothing.
 */
export const mayRetrySame = (error: unknown): boolean => !(error instanceof KassaError && (error.status === 409 || error.status === 422));

/** Record the request's signature as used (409 if it was); returns the way to give it back. */
export async function consumeSignature(deps: Deps, request: FastifyRequest): Promise<() => Promise<void>> {
  // Authentication ran first (a preHandler), so the header parses and its timestamp is fresh.
  const parsed = parseAuthorization(request.headers.authorization);
  if (!parsed) throw unauthorized('A signed request is required.');
  // The signature stops being accepted MAX_CLOCK_SKEW_S after its timestamp; a minute more for clocks.
  const expiresAt = new Date((parsed.timestamp + MAX_CLOCK_SKEW_S + 60) * 1000).toISOString();
  const [recorded] = await deps.database.sql<{ signature: string }[]>`
    with expired as (delete from used_signatures where expires_at < ${deps.now().toISOString()}::timestamptz)
    insert into used_signatures (signature, expires_at) values (${parsed.signature}, ${expiresAt}::timestamptz)
    on conflict (signature) do nothing
    returning signature`;
  if (!recorded) {
    throw conflict(
      'REQUEST_ALREADY_USED',
      'This exact signed request was already received (carried out or refused): each request to this operation is accepted once, and the same request signed within the same second signs the same. Read GET /v1/whitelisted-addresses for its outcome, or sign it again with a later timestamp.',
    );
  }
  return async () => {
    await deps.database.sql`delete from used_signatures where signature = ${parsed.signature}`;
  };
}
