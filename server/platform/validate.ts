/** Parse input with a zod schema, turning issues into a 400 with one entry per field. */
import type { z } from 'zod';
import { validationFailed, type FieldError } from './errors.js';

export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.map(String).join('.') : '(body)',
    message: issue.code === 'unrecognized_keys' ? issue.message : issue.message.replace(/^Invalid input: /, ''),
  }));
}

export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what = 'request'): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationFailed(fieldErrors(result.error), `The ${what} is invalid.`);
  return result.data;
}

export const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
