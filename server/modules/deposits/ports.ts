/**
 * What deposits need from outside: screening of senders, on top of what
 * payments need (deposits move payments).
 */
import type { ScreeningPort } from '../compliance/index.js';
import type { PaymentRow, PaymentsDeps } from '../payments/index.js';
import type { DepositStatus } from '../money/index.js';
import type { SimulateDepositInput } from './simulate-deposit.schema.js';

/** What ingesting one chain report did. */
export type IngestResult =
  | { outcome: 'CREATED' | 'UPDATED' | 'REPLAY'; depositId: string; status: DepositStatus; paymentId: string }
  | { outcome: 'UNMATCHED' | 'IGNORED' };

export type SimulatedDeposit = { transactionId: string; txHash: string; ingest: IngestResult };

export type DepositsDeps = PaymentsDeps & { screening: ScreeningPort };

/**
 * Sandbox only: a faucet that makes a simulated transfer to a payment's
 * address and reports it (SEEN now, CONFIRMED or DROPPED when settled), the
 * way a chain watcher would. `null` outside sandbox.
 */
export interface SandboxFaucet {
  simulate(deps: DepositsDeps, payment: PaymentRow, input: SimulateDepositInput): Promise<SimulatedDeposit>;
  settle(deps: DepositsDeps, transactionId: string): Promise<IngestResult>;
}
