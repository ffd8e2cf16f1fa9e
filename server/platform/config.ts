/**
 * Configuration: the environment variables of CONTRACT §1, validated once at
 * start by one zod schema. A bad value stops the process with a message
 * naming the variable.
 */
import { isIP } from 'node:net';
import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const seconds = z.coerce.number().int().positive();

/** One proxy address or range: an IP, or an IP with a prefix length (CIDR). */
const isProxyAddress = (entry: string) => {
  const [ip, prefix, ...rest] = entry.split('/');
  const family = isIP(ip ?? '');
  if (!family || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
};

/**
 * Which proxies' X-Forwarded-For Kassa believes (Fastify's trustProxy): none (`false`, the default),
 * a hop count, or the proxies' addresses and ranges. Never "all": a client could then claim any
 * address, and the lockouts and checkout limits count by address.
 */
const TRUST_PROXY_FORMAT =
  'must be false, a hop count from 1 to 9, or the proxies\' addresses or CIDR ranges, comma-separated (never "true": any client could then choose its address)';
const trustProxy = z
  .string()
  .transform((v) => v.trim())
  .pipe(
    z.union([
      z.enum(['false', '0']).transform(() => false as const),
      z.string().regex(/^[1-9]$/).transform(Number),
      z
        .string()
        .transform((v) => v.split(',').map((entry) => entry.trim()))
        .refine((entries) => entries.every(isProxyAddress), { error: TRUST_PROXY_FORMAT }),
    ], { error: TRUST_PROXY_FORMAT }),
  );

const EnvSchema = z.object({
  NODE_ENV: z.string().optional(),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  KASSA_SANDBOX: bool.optional(),
  KASSA_MASTER_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$|^[A-Za-z0-9+/_-]{43}=?$/, 'must be 32 bytes as 64 hex chars or base64')
    .optional(),
  KASSA_CALLBACK_RETRY_INTERVAL_S: seconds.default(120),
  KASSA_CALLBACK_RETRY_WINDOW_S: seconds.default(86400),
  KASSA_CALLBACK_TIMEOUT_MS: z.coerce.number().int().positive().default(10000),
  KASSA_ALLOW_PRIVATE_CALLBACK_URLS: bool.optional(),
  KASSA_SANDBOX_BROADCAST_DELAY_S: z.coerce.number().min(0).default(5),
  KASSA_SANDBOX_CONFIRM_DELAY_S: z.coerce.number().min(0).default(3),
  KASSA_DATA_DIR: z.string().min(1).default('.kassa'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  KASSA_METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').max(256).optional(),
  KASSA_TRUST_PROXY: trustProxy.optional(),
});

export type Config = {
  databaseUrl: string | undefined;
  port: number;
  host: string;
  publicUrl: string;
  sandbox: boolean;
  production: boolean;
  masterKey: string | undefined;
  callbackRetryIntervalS: number;
  callbackRetryWindowS: number;
  callbackTimeoutMs: number;
  allowPrivateCallbackUrls: boolean;
  sandboxBroadcastDelayS: number;
  sandboxConfirmDelayS: number;
  dataDir: string;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  /** Bearer token for GET /metrics; unset: /metrics answers loopback clients only. */
  metricsToken: string | undefined;
  /** Whose X-Forwarded-For gives the client's address: false (nobody), a hop count, or the proxies' addresses. */
  trustProxy: false | number | string[];
};

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parse and validate the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Empty strings count as unset, as a shell `FOO= npm start` intends.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0])}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  const sandbox = e.KASSA_SANDBOX ?? !production;
  if (!sandbox && !e.KASSA_MASTER_KEY) {
    throw new ConfigError('Invalid configuration:\n  KASSA_MASTER_KEY: required outside sandbox');
  }
  return {
    databaseUrl: e.DATABASE_URL,
    port: e.PORT,
    host: e.HOST,
    publicUrl: (e.PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    sandbox,
    production,
    masterKey: e.KASSA_MASTER_KEY,
    callbackRetryIntervalS: e.KASSA_CALLBACK_RETRY_INTERVAL_S,
    callbackRetryWindowS: e.KASSA_CALLBACK_RETRY_WINDOW_S,
    callbackTimeoutMs: e.KASSA_CALLBACK_TIMEOUT_MS,
    allowPrivateCallbackUrls: e.KASSA_ALLOW_PRIVATE_CALLBACK_URLS ?? sandbox,
    sandboxBroadcastDelayS: e.KASSA_SANDBOX_BROADCAST_DELAY_S,
    sandboxConfirmDelayS: e.KASSA_SANDBOX_CONFIRM_DELAY_S,
    dataDir: e.KASSA_DATA_DIR,
    logLevel: e.LOG_LEVEL,
    metricsToken: e.KASSA_METRICS_TOKEN,
    trustProxy: e.KASSA_TRUST_PROXY ?? false,
  };
}
