/**
 * The shape of an operator CLI command (CONTRACT §9) and the option checks
 * they share. A command is data: its name, its options (node:util parseArgs
 * config, checked strictly per command), one usage line, and `run`, which
 * returns what to print — one JSON value for `--json`, a text for people.
 * cli.ts parses, opens the database, runs and prints; commands never write
 * to stdout themselves.
 */
import type { ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import type { Db } from '../../../db/client.js';
import type { Deps } from '../../deps.js';
import type { MasterKey } from '../../platform/secrets.js';
import { KassaError } from '../../platform/errors.js';
import { findOperatorByName, getBusiness } from '../../modules/businesses/index.js';

/** A wrong invocation: exit code 2 and the usage. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export type CliContext = {
  db: Db;
  masterKey: MasterKey;
  /** Built on first use: most commands need only the database. */
  deps: () => Deps;
  now: () => Date;
};

export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;
export type Output = { json: unknown; human: string };

type Options = NonNullable<ParseArgsConfig['options']>;

export type Command = {
  name: string;
  /** Option flags after the name, for the usage text. */
  usage: string;
  /** One line: what it does. */
  summary: string;
  options: Options;
  /** Positional arguments allowed (default none). */
  positionals?: boolean;
  run: (ctx: CliContext, values: Values, positionals: string[]) => Promise<Output>;
};

/**
 * A command from its usage line as the help prints it (`name --flag <value> [--other]`), which
 * names each flag once: the options parsed are read from it (`optionsOf`); `more.options` adds
 * what a usage line cannot say (a repeatable flag).
 */
export function command(
  line: string,
  summary: string,
  run: Command['run'],
  more: { options?: Options; positionals?: boolean } = {},
): Command {
  const [name = '', ...usage] = line.split(' ');
  return { name, usage: usage.join(' '), summary, options: { ...optionsOf(line), ...more.options }, positionals: more.positionals, run };
}

/**
 * The parseArgs options of a usage line: a `--flag` followed by a word that is not a flag (a
 * placeholder or an example value: `--business <id>`, `--limit 50`) takes a string; a bare
 * `--flag` is a boolean. Brackets (optional) and `…` (repeatable) are read past.
 */
export function optionsOf(usage: string): Options {
  const words = usage.split(/\s+/).map((w) => w.replace(/^\[|\]?\u2026?$/g, ''));
  const options: Options = {};
  words.forEach((word, i) => {
    if (!word.startsWith('--')) return;
    const next = words[i + 1];
    options[word.slice(2)] = next && !next.startsWith('--') ? { type: 'string' } : { type: 'boolean' };
  });
  return options;
}

/** `--limit`: 1 to 500, 50 when not given. */
export function limitOf(values: Values): number {
  const text = (values.limit as string | undefined) ?? '50';
  if (!/^[0-9]{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 500) throw new UsageError('--limit must be 1 to 500.');
  return Number(text);
}

export function optionalString(values: Values, flag: string): string | undefined {
  const v = values[flag];
  return typeof v === 'string' ? v : undefined;
}

export function requireString(values: Values, flag: string, what = 'a value'): string {
  const v = optionalString(values, flag);
  if (!v) throw new UsageError(`--${flag} <${what}> is required.`);
  return v;
}

export function requireUuid(values: Values, flag: string): string {
  const v = optionalString(values, flag);
  if (!v || !z.guid().safeParse(v).success) throw new UsageError(`--${flag} <uuid> is required.`);
  return v.toLowerCase();
}

export function optionalUuid(values: Values, flag: string): string | undefined {
  return values[flag] === undefined ? undefined : requireUuid(values, flag);
}

/** One of a few words, case-insensitive; returned as written in `choices`. */
export function requireChoice<T extends string>(values: Values, flag: string, choices: readonly T[]): T {
  const v = optionalString(values, flag);
  const found = choices.find((c) => c.toLowerCase() === v?.toLowerCase());
  if (!found) throw new UsageError(`--${flag} must be ${choices.join(' or ')}.`);
  return found;
}

export function parseBoolean(text: string, flag: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new UsageError(`--${flag} must be true or false.`);
}

/** The business named by --business, which must exist (NOT_FOUND, exit 1, otherwise). */
export async function requireBusiness(ctx: CliContext, values: Values): Promise<string> {
  const businessId = requireUuid(values, 'business');
  await getBusiness(ctx.db, businessId);
  return businessId;
}

/**
 * The operator named by --operator: approvals are recorded per operator (two
 * different ones for policy TWO), so it must be an existing admin
 * (`operator:create`), as the internal API requires an admin token.
 */
export async function requireAdmin(ctx: CliContext, values: Values): Promise<{ id: string; name: string }> {
  const name = requireString(values, 'operator', 'name');
  const op = await findOperatorByName(ctx.db, name);
  // Refusals (exit 1, one line), not usage errors: the command was written right.
  if (!op) throw new KassaError(404, 'NOT_FOUND', `Operator ${name} not found; create one with operator:create --name ${JSON.stringify(name)} --role admin.`);
  if (op.role !== 'admin') throw new KassaError(403, 'FORBIDDEN', `Operator ${name} is a ${op.role}; only an admin decides.`);
  return { id: op.id, name: op.name };
}

/** A table for people: columns padded to their widest cell. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n');
}
