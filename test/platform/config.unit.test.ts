/**
 * Configuration (CONTRACT §1): defaults, sandbox versus production, and a
 * bad value stopping start with a message that names the variable.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/platform/config.js';

const KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

/** The error loadConfig throws for `env`; fails the test when it does not throw. */
function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig defaults', () => {
  it('gives the documented defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.publicUrl).toBe('http://localhost:3000');
    expect(c.databaseUrl).toBeUndefined();
    expect(c.sandbox).toBe(true);
    expect(c.production).toBe(false);
    expect(c.masterKey).toBeUndefined();
    expect(c.callbackRetryIntervalS).toBe(120);
    expect(c.callbackRetryWindowS).toBe(86400);
    expect(c.callbackTimeoutMs).toBe(10000);
    expect(c.allowPrivateCallbackUrls).toBe(true);
    expect(c.sandboxBroadcastDelayS).toBe(5);
    expect(c.sandboxConfirmDelayS).toBe(3);
    expect(c.trustProxy).toBe(false);
  });

  it('PUBLIC_URL defaults to localhost on the configured PORT', () => {
    const c = loadConfig({ PORT: '8080' });
    expect(c.port).toBe(8080);
    expect(c.publicUrl).toBe('http://localhost:8080');
  });

  it('reads every variable when set', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://kassa:pw@db.internal:5432/kassa',
      PORT: '4000',
      HOST: '0.0.0.0',
      PUBLIC_URL: 'https://pay.example',
      KASSA_MASTER_KEY: KEY,
      KASSA_CALLBACK_RETRY_INTERVAL_S: '30',
      KASSA_CALLBACK_RETRY_WINDOW_S: '3600',
      KASSA_CALLBACK_TIMEOUT_MS: '2500',
      KASSA_ALLOW_PRIVATE_CALLBACK_URLS: 'false',
      KASSA_SANDBOX_BROADCAST_DELAY_S: '0',
      KASSA_SANDBOX_CONFIRM_DELAY_S: '1',
    });
    expect(c.databaseUrl).toBe('postgres://kassa:pw@db.internal:5432/kassa');
    expect(c.port).toBe(4000);
    expect(c.host).toBe('0.0.0.0');
    expect(c.publicUrl).toBe('https://pay.example');
    expect(c.masterKey).toBe(KEY);
    expect(c.callbackRetryIntervalS).toBe(30);
    expect(c.callbackRetryWindowS).toBe(3600);
    expect(c.callbackTimeoutMs).toBe(2500);
    expect(c.allowPrivateCallbackUrls).toBe(false);
    expect(c.sandboxBroadcastDelayS).toBe(0);
    expect(c.sandboxConfirmDelayS).toBe(1);
  });

  it('accepts postgresql:// as well as postgres://', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@localhost/db' }).databaseUrl).toBe('postgresql://u@localhost/db');
  });

  it('removes the trailing slash of PUBLIC_URL', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://pay.example/' }).publicUrl).toBe('https://pay.example');
    expect(loadConfig({ PUBLIC_URL: 'https://pay.example/kassa/' }).publicUrl).toBe('https://pay.example/kassa');
    expect(loadConfig({ PUBLIC_URL: 'http://localhost:3000' }).publicUrl).toBe('http://localhost:3000');
  });

  it('treats empty strings as unset', () => {
    const c = loadConfig({ PORT: '', HOST: '', KASSA_SANDBOX: '' });
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.sandbox).toBe(true);
  });
});

describe('sandbox and production', () => {
  it('NODE_ENV=production turns sandbox off and requires KASSA_MASTER_KEY', () => {
    const error = configError({ NODE_ENV: 'production' });
    expect(error.message).toContain('KASSA_MASTER_KEY');
    const c = loadConfig({ NODE_ENV: 'production', KASSA_MASTER_KEY: KEY });
    expect(c.sandbox).toBe(false);
    expect(c.production).toBe(true);
    expect(c.masterKey).toBe(KEY);
    // Outside sandbox, private callback URLs are refused by default.
    expect(c.allowPrivateCallbackUrls).toBe(false);
  });

  it('KASSA_SANDBOX=false without a master key is an error naming KASSA_MASTER_KEY', () => {
    expect(configError({ KASSA_SANDBOX: 'false' }).message).toContain('KASSA_MASTER_KEY');
    const c = loadConfig({ KASSA_SANDBOX: 'false', KASSA_MASTER_KEY: KEY });
    expect(c.sandbox).toBe(false);
    expect(c.production).toBe(false);
    expect(c.allowPrivateCallbackUrls).toBe(false);
  });

  it('KASSA_SANDBOX=true overrides NODE_ENV=production', () => {
    const c = loadConfig({ NODE_ENV: 'production', KASSA_SANDBOX: 'true' });
    expect(c.sandbox).toBe(true);
    expect(c.allowPrivateCallbackUrls).toBe(true);
  });

  it('KASSA_ALLOW_PRIVATE_CALLBACK_URLS can be set either way', () => {
    expect(loadConfig({ KASSA_ALLOW_PRIVATE_CALLBACK_URLS: 'false' }).allowPrivateCallbackUrls).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', KASSA_MASTER_KEY: KEY, KASSA_ALLOW_PRIVATE_CALLBACK_URLS: 'true' }).allowPrivateCallbackUrls).toBe(true);
  });

  it('accepts the master key as base64 too', () => {
    const b64 = Buffer.from(KEY, 'hex').toString('base64');
    expect(loadConfig({ NODE_ENV: 'production', KASSA_MASTER_KEY: b64 }).masterKey).toBe(b64);
  });
});

describe('a bad value names the variable', () => {
  it.each(['abc', '70000', '-1', '3000.5', '65536'])('PORT=%s', (port) => {
    const error = configError({ PORT: port });
    expect(error.message).toMatch(/\bPORT\b/);
  });

  it.each(['mysql://x', 'not a url', 'http://db:5432/kassa'])('DATABASE_URL=%s', (url) => {
    expect(configError({ DATABASE_URL: url }).message).toContain('DATABASE_URL');
  });

  it.each(['ftp://pay.example', 'pay.example', 'javascript:alert(1)'])('PUBLIC_URL=%s', (url) => {
    expect(configError({ PUBLIC_URL: url }).message).toContain('PUBLIC_URL');
  });

  it('KASSA_SANDBOX must be a boolean', () => {
    expect(configError({ KASSA_SANDBOX: 'maybe' }).message).toContain('KASSA_SANDBOX');
  });

  it('KASSA_MASTER_KEY must be 32 bytes', () => {
    expect(configError({ KASSA_MASTER_KEY: 'short' }).message).toContain('KASSA_MASTER_KEY');
    expect(configError({ KASSA_MASTER_KEY: KEY.slice(2) }).message).toContain('KASSA_MASTER_KEY');
  });

  it('callback timings must be positive integers', () => {
    expect(configError({ KASSA_CALLBACK_RETRY_INTERVAL_S: '0' }).message).toContain('KASSA_CALLBACK_RETRY_INTERVAL_S');
    expect(configError({ KASSA_CALLBACK_RETRY_WINDOW_S: 'day' }).message).toContain('KASSA_CALLBACK_RETRY_WINDOW_S');
    expect(configError({ KASSA_CALLBACK_TIMEOUT_MS: '-5' }).message).toContain('KASSA_CALLBACK_TIMEOUT_MS');
  });

  it('names every bad variable at once, and only those', () => {
    const message = configError({ PORT: 'abc', DATABASE_URL: 'mysql://x', HOST: 'localhost' }).message;
    expect(message).toMatch(/\bPORT\b/);
    expect(message).toContain('DATABASE_URL');
    expect(message).not.toContain('HOST');
  });

  it('KASSA_TRUST_PROXY: false, a hop count, or proxy addresses and ranges; never "true"', () => {
    expect(loadConfig({ KASSA_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ KASSA_TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ KASSA_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8' }).trustProxy).toEqual(['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8']);
    for (const bad of ['true', 'all', '10', '10.0.0.0/33', '::1/129', '127.0.0.1/8/1', 'proxy.internal', '127.0.0.1,']) {
      expect(configError({ KASSA_TRUST_PROXY: bad }).message, bad).toContain('KASSA_TRUST_PROXY');
    }
    expect(configError({ KASSA_TRUST_PROXY: 'true' }).message).toContain('never "true"');
  });
});
