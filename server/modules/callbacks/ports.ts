/**
 * What callbacks need from outside: a transport that POSTs one signed body
 * and reports what happened. The composition root picks it (the SSRF-safe
 * HTTP transport in adapters/callbacks).
 */
import type { Database } from '../../../db/client.js';
import type { PlatformDeps } from '../../platform/runtime.js';

export type PostResult = { statusCode: number | null; latencyMs: number; error: string | null };

export interface CallbackTransport {
  post(url: string, body: string, headers: Record<string, string>): Promise<PostResult>;
}

/** What the callbacks module is given by the composition root. */
export type CallbacksDeps = PlatformDeps & { database: Database; callbacks: CallbackTransport };
