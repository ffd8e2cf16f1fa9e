/**
 * The sandbox chain: real, correctly encoded addresses derived from a seed,
 * and transactions simulated as rows of `sandbox_transactions` instead of a
 * real blockchain. Broadcasts confirm at once.
 */
import { createHmac } from 'node:crypto';
import type { Database } from '../../db/client.js';
import { sandboxTransactions } from '../../db/schema.js';
import type { Network } from '../money/catalog.js';
import type { Broadcast, BroadcastResult, ChainAdapter, DepositAddress } from './adapter.js';
import { deriveDepositAddress } from './addresses.js';
import { sandboxTxHash } from './tx-hash.js';

export class SandboxChain implements ChainAdapter {
  private readonly seed: Uint8Array;

  /** The address seed is derived from the master key, so addresses survive restarts. */
  constructor(
    masterKey: Buffer,
    private readonly database: Database,
    private readonly now: () => Date,
  ) {
    this.seed = createHmac('sha256', masterKey).update('kassa/sandbox-deposit-seed').digest();
  }

  depositAddress(network: Network, index: number): DepositAddress {
    return deriveDepositAddress(this.seed, network, index);
  }

  async broadcast(tx: Broadcast): Promise<BroadcastResult> {
    // The hash is a function of the idempotency id, so a retried broadcast is the same transaction.
    const txHash = sandboxTxHash(tx.network, tx.id);
    await this.database.db
      .insert(sandboxTransactions)
      .values({
        network: tx.network,
        txHash,
        fromAddress: 'kassa-hot-wallet',
        toAddress: tx.toAddress,
        destinationTag: tx.destinationTag ?? null,
        currency: tx.currency,
        amount: tx.amount,
        status: 'CONFIRMED',
        willConfirm: true,
      })
      .onConflictDoNothing();
    return { txHash, confirmedAt: this.now() };
  }
}
