/** Parse input with a zod schema, turning issues into a 400 with one entry per field. */
import { z } from 'zod';
import { validationFailed, type FieldError } from './errors.js';

const fieldOf = (path: readonly PropertyKey[]) => (path.length ? path.map(String).join('.') : '(body)');

/**
 * One entry per field. A strict object's unknown keys come as one issue
 * listing them all: split it into one entry per key, `field` = the key's own
 * path, so a typo such as `displayAmmount` is named, not summarised.
 */
export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: fieldOf([...issue.path, key]), message: 'unknown field: not part of this request; check its spelling' }))
      : [{ field: fieldOf(issue.path), message: issue.message.replace(/^Invalid input: /, '') }],
  );
}

export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what = 'request'): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationFailed(fieldErrors(result.error), `The ${what} is invalid.`);
  return result.data;
}

export const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * Free text PostgreSQL can store as sent and a log shows as it is: no control characters (a NUL byte
 * was a 500) and no lone UTF-16 surrogate (`\ud800` is stored as U+FFFD, so two different ids would
 * become one: an idempotency key colliding with another). A paired surrogate (an emoji) is one code
 * point to the `u` flag and passes.
 */
export const plainText = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters')
    .regex(/^[^\p{Cs}]*$/u, 'must be valid Unicode: a lone surrogate (\\ud800–\\udfff) is not a character');

/** A merchant's own identifier (clientPaymentId, clientWithdrawalId): 1–255 characters, no control characters. */
export const clientId = () => plainText(255).min(1);

/**
 * A page size, 1–100 (default 20), written in digits: " 1", "1e1" or "10.0" are refused, not read as
 * numbers the way Number() would.
 */
export const pageLimit = () =>
  z
    .preprocess((v) => (typeof v === 'string' && /^[0-9]{1,3}$/.test(v) ? Number(v) : v), z.number({ error: 'must be an integer from 1 to 100, in digits' }).int().min(1).max(100))
    .default(20)
    .describe('Page size, 1–100 (default 20).');
