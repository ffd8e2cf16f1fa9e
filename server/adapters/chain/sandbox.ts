/**
 * The sandbox chain: real, correctly encoded addresses derived from a seed,
 * and transactions simulated as rows of `sandbox_transactions` instead of a
 * real blockchain. Broadcasts confirm at once.
 */
import { createHmac } from 'node:crypto';
import { connect, type Database } from '../../../db/client.js';
import { sandboxTransactions } from '../../../db/schema.js';
import type { Network } from '../../modules/money/catalog.js';
import type { Broadcast, BroadcastResult, ChainAdapter, DepositAddress } from '../../modules/networks/ports.js';
import { deriveDepositAddress } from '../../modules/networks/addresses.rules.js';
import { sandboxTxHash } from '../../modules/networks/tx-hash.rules.js';

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

  /**
   * Broadcasts are called inside the caller's transaction (which holds a pool
   * connection); recording them on the same pool could wait for a connection
   * that never frees. The simulated chain keeps its own small pool, as a real
   * node would be its own connection.
   */
  private chainDb: Database | null = null;

  async broadcast(tx: Broadcast): Promise<BroadcastResult> {
    // The hash is a function of the idempotency id, so a retried broadcast is the same transaction.
    const txHash = sandboxTxHash(tx.network, tx.id);
    this.chainDb ??= connect(this.database.url, { max: 2 });
    await this.chainDb.db
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
