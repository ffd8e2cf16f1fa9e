/**
 * Bitcoin Core-compatible JSON-RPC over fetch. Credentials in the URL
 * (`http://user:pass@host:port`) become an HTTP Basic header, because Node's fetch refuses a URL
 * that carries credentials. Every call has a timeout; failures are typed so callers can tell a
 * node that said no (RpcError, with Core's code) from one that did not answer. At most a few
 * calls are at the node at once (RPC_IN_FLIGHT).
 */
import pLimit, { type LimitFunction } from 'p-limit';

/** The node answered with a JSON-RPC error (e.g. -5 no such transaction, -26 rejected, -27 already in chain). */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
  ) {
    super(`${method}: ${message} (code ${code})`);
    this.name = 'RpcError';
  }
}

/** Transport failure: refused connection, timeout, non-JSON or an HTTP status without a JSON-RPC body (401, 404 wallet). */
export class RpcUnavailableError extends Error {
  constructor(
    readonly method: string,
    readonly reason: 'timeout' | 'connection' | 'http',
    detail: string,
    readonly status?: number,
  ) {
    super(`${method}: node unavailable (${reason}): ${detail}`);
    this.name = 'RpcUnavailableError';
  }
}

/** Core's RPC error codes Kassa reacts to. */
export const RPC_CODES = {
  INVALID_ADDRESS_OR_KEY: -5, // no such transaction / block
  VERIFY_REJECTED: -26,
  VERIFY_ALREADY_IN_CHAIN: -27,
  VERIFY_ERROR: -25, // missing inputs (spent or unknown)
} as const;

/**
 * Core prints amounts as fixed-point JSON numbers ("value": 1.50000000); JSON.parse would make
 * them floats. Quote them first so they reach Kassa as exact decimal strings.
 */
const AMOUNT_FIELD = /"(value|fee|feerate|amount|balance|fees|base|modified|ancestor|descendant|mempoolminfee|minrelaytxfee|relayfee|incrementalfee)":\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/g;
export function exactAmounts(text: string): string {
  return text.replace(AMOUNT_FIELD, '"$1":"$2"');
}

export type RpcOptions = {
  timeoutMs?: number;
  /** Calls at the node at once; the others wait their turn (default 4, see RPC_IN_FLIGHT). */
  inFlight?: number;
};

/**
 * Calls a client keeps at the node at once. Core's RPC server has 4 threads and a queue of 16 by
 * default (`-rpcthreads`, `-rpcworkqueue`) and refuses what overflows it with HTTP 500 "Work queue
 * depth exceeded": a reorganisation walked back 20 block hashes at once, and a deposit with many
 * inputs asked for one previous transaction per input, so a scan could fail on every pass. With
 * 4 a client (each role runs its own), several processes still stay inside the default queue.
 */
export const RPC_IN_FLIGHT = 4;

/**
 * One node as its clients see it: whose turn it is, when a call last got an answer (any answer,
 * a JSON-RPC error too), and the last call it failed to answer (sent at `sentAt`, failed at `at`).
 */
type NodeTurns = {
  turns: LimitFunction;
  answeredAt: number;
  unreachable: { at: number; sentAt: number; reason: 'timeout' | 'connection'; detail: string } | null;
};

/**
 * How long `/ready` and `/metrics` wait for a node's answer: a hung node must show as down well
 * within a readiness probe's and a Prometheus scrape's own timeouts (10 s by default), not after
 * the 15 s a scanner's call may take.
 */
export const PROBE_TIMEOUT_MS = 2000;

export class RpcClient {
  private readonly endpoint: string;
  private readonly authorization: string | undefined;
  private readonly timeoutMs: number;
  /** Shared by the clients `withPath` makes: one node, one queue. */
  private readonly node: NodeTurns;
  private nextId = 1;

  constructor(url: string, options: RpcOptions = {}) {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      const user = decodeURIComponent(parsed.username);
      const pass = decodeURIComponent(parsed.password);
      this.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
      parsed.username = '';
      parsed.password = '';
    }
    this.endpoint = parsed.toString();
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.node = { turns: pLimit(options.inFlight ?? RPC_IN_FLIGHT), answeredAt: 0, unreachable: null };
  }

  /** The same node, another path (e.g. `/wallet/funder`): shares credentials, timeout and the node's turns. */
  withPath(path: string): RpcClient {
    const client = Object.create(RpcClient.prototype) as RpcClient;
    const url = new URL(this.endpoint);
    url.pathname = path;
    Object.assign(client, { endpoint: url.toString(), authorization: this.authorization, timeoutMs: this.timeoutMs, node: this.node, nextId: 1 });
    return client;
  }

  /**
   * One call, when its turn comes (the timeout runs from then). A call whose turn comes after the
   * node failed to answer another one (timeout, refused connection), with no answer to any call
   * since that one was sent, fails at once instead of waiting out a timeout of its own: behind a
   * hung node, a queue of 20 would take five timeouts. One slow call among answered ones fails alone.
   */
  call<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const asked = performance.now();
    return this.node.turns(async () => {
      const failed = this.node.unreachable;
      if (failed && failed.at >= asked && this.node.answeredAt < failed.sentAt) {
        throw new RpcUnavailableError(method, failed.reason, `another call failed while this one waited: ${failed.detail}`);
      }
      const sentAt = performance.now();
      try {
        const result = await this.send<T>(method, params);
        this.node.answeredAt = performance.now();
        return result;
      } catch (error) {
        if (error instanceof RpcUnavailableError && error.reason !== 'http') {
          this.node.unreachable = { at: performance.now(), sentAt, reason: error.reason, detail: error.message };
        } else {
          this.node.answeredAt = performance.now(); // a JSON-RPC error or an HTTP status is an answer
        }
        throw error;
      }
    });
  }

  /**
   * One call now, outside the turns: a readiness check must say whether the node answers, not wait
   * behind a scan's queue (nor fail for another call's timeout). At most one such call a check.
   */
  probe<T = unknown>(method: string, params: unknown[] = [], timeoutMs = PROBE_TIMEOUT_MS): Promise<T> {
    return this.send<T>(method, params, timeoutMs);
  }

  private async send<T>(method: string, params: unknown[], timeoutMs = this.timeoutMs): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.authorization) headers.authorization = this.authorization;
    let response: Response;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '1.0', id: this.nextId++, method, params }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const e = error as Error & { cause?: { code?: string } };
      if (e.name === 'TimeoutError' || e.name === 'AbortError') throw new RpcUnavailableError(method, 'timeout', `no answer in ${timeoutMs} ms`);
      throw new RpcUnavailableError(method, 'connection', e.cause?.code ?? e.message);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw new RpcUnavailableError(method, 'timeout', (error as Error).message);
    }
    // Core answers RPC errors with HTTP 500 (or 404 for an unknown method) and a JSON body; other statuses have none.
    let body: { result?: T; error?: { code: number; message: string } | null } | undefined;
    try {
      body = JSON.parse(exactAmounts(text));
    } catch {
      throw new RpcUnavailableError(method, 'http', `HTTP ${response.status} ${text.slice(0, 200)}`, response.status);
    }
    if (body?.error) throw new RpcError(method, body.error.code, body.error.message);
    if (!response.ok) throw new RpcUnavailableError(method, 'http', `HTTP ${response.status}`, response.status);
    return body!.result as T;
  }
}
