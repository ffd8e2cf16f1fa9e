/**
 * Outbound HTTP for callbacks, safe against SSRF: the destination address
 * is checked when the connection is made (after DNS, so a rebinding name
 * cannot slip through), redirects are not followed, the wait is bounded by
 * KASSA_CALLBACK_TIMEOUT_MS and at most 64 KiB of the answer is read.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { Agent, request } from 'undici';
import type { CallbackTransport, PostResult } from '../../modules/callbacks/index.js';

/** Loopback, private, link-local (cloud metadata), CGNAT, unspecified, multicast — IPv4 and IPv6. */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv6');
}

export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return PRIVATE.check(ip, 'ipv4');
  if (family === 6) {
    // IPv4-mapped IPv6 (::ffff:127.0.0.1) is checked as the IPv4 address it is.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    return mapped ? PRIVATE.check(mapped[1]!, 'ipv4') : PRIVATE.check(ip, 'ipv6');
  }
  return true;
}

export class EgressRefused extends Error {
  override name = 'EgressRefused';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
      if (refused) return callback(new EgressRefused(`${hostname} resolves to a private address (${refused.address})`), []);
      if (options.all) return callback(null, addresses);
      const first = addresses[0]!;
      callback(null, first.address, first.family);
    });
  };
}


export const MAX_RESPONSE_BYTES = 64 * 1024;

export class CallbackSender implements CallbackTransport {
  private readonly agent: Agent;

  constructor(private readonly options: { timeoutMs: number; allowPrivate: boolean }) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup(options.allowPrivate) as never, timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  async post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    const started = performance.now();
    const done = (statusCode: number | null, error: string | null): PostResult => ({
      statusCode,
      latencyMs: Math.round(performance.now() - started),
      error,
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return done(null, 'invalid URL');
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') return done(null, 'only http(s) URLs are called');
    // An IP literal skips DNS, so it is checked here; names are checked at connect time.
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && !this.options.allowPrivate && isPrivateAddress(literal)) {
      return done(null, `refused: ${literal} is a private address`);
    }
    try {
      const response = await request(target, {
        method: 'POST',
        body,
        headers,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      // Read a bounded prefix of the answer, then drop the rest.
      let read = 0;
      for await (const chunk of response.body) {
        read += (chunk as Buffer).length;
        if (read > MAX_RESPONSE_BYTES) {
          response.body.destroy();
          break;
        }
      }
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return done(response.statusCode, ok ? null : `HTTP ${response.statusCode}`);
    } catch (error) {
      const e = error as Error & { cause?: Error };
      const reason = e.name === 'TimeoutError' || e.name === 'AbortError' ? `timeout after ${this.options.timeoutMs} ms` : (e.cause?.message ?? e.message);
      return done(null, reason.slice(0, 500));
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
