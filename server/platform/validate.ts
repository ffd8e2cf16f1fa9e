/** Parse input with a zod schema, turning issues into a 400 with one entry per field. */
import type { z } from 'zod';
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
