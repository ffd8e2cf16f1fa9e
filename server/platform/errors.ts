/**
 * Typed domain errors. Domain code throws a KassaError with a stable code;
 * the HTTP edge maps it to problem+json (server/edges/rest/problem.ts) and the
 * tRPC error formatter to a tRPC code (server/edges/trpc/init.ts).
 */

export type FieldError = { field: string; message: string };

export class KassaError extends Error {
  override name = 'KassaError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const validationFailed = (errors: FieldError[], detail = 'The request is invalid.') =>
  new KassaError(400, 'VALIDATION_FAILED', detail, errors);
/** The merchant API's 401: `WWW-Authenticate` names its scheme (RFC 9110 §11.6.1), as CONTRACT §2's header does. */
export const unauthorized = (detail: string) => new KassaError(401, 'UNAUTHORIZED', detail, [], { 'www-authenticate': 'KASSA-API' });
export const forbidden = (code: string, detail: string) => new KassaError(403, code, detail);
export const notFound = (detail: string) => new KassaError(404, 'NOT_FOUND', detail);
export const conflict = (code: string, detail: string) => new KassaError(409, code, detail);
export const unprocessable = (code: string, detail: string, errors: FieldError[] = []) =>
  new KassaError(422, code, detail, errors);

/**
 * A refusal of a well-formed request for what holds now, a business rule (422) or an outage (503): a
 * replay of an earlier request with the same idempotency key is answered with what that request made
 * instead (payments and withdrawals).
 */
export const refusedForNow = (error: unknown): error is KassaError => error instanceof KassaError && (error.status === 422 || error.status === 503);
