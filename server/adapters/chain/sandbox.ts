/**
 * The sandbox chain: transactions simulated as rows of `sandbox_transactions`
 * instead of a real blockchain, one `ChainPort` per network. Broadcasts
 * confirm at once.
 */
import { connect, type Database } from '../../../db/client.js';
import { sandboxTransactions } from '../../../db/schema.js';
import { NETWORKS, type Network } from '../../modules/money/index.js';
import { sandboxTxHash } from '../../modules/networks/index.js';
import type { Broadcast, BroadcastResult, ChainPort } from '../../modules/networks/ports.js';

export class SandboxChain implements ChainPort {
  constructor(
    readonly network: Network,
    private readonly chainDb: () => Database,
    private readonly now: () => Date,
  ) {}

  async broadcast(tx: Broadcast): Promise<BroadcastResult> {
    // The hash is a function of the idempotency id, so a retried broadcast is the same transaction.
    const txHash = sandboxTxHash(this.network, tx.id);
    await this.chainDb()
      .db.insert(sandboxTransactions)
      .values({
        network: this.network,
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

/**
 * All nine networks on the sandbox. The simulated chain keeps its own small
 * pool, opened on first use, as a real node would be its own connection.
 */
export function sandboxChains(database: Database, now: () => Date): Record<Network, ChainPort> {
  let pool: Database | null = null;
  const chainDb = () => (pool ??= connect(database.url, { max: 2 }));
  return Object.fromEntries(NETWORKS.map((n) => [n, new SandboxChain(n, chainDb, now)])) as unknown as Record<Network, ChainPort>;
}
