/**
 * Per-network gauges for live mode (CONTRACT §10), read at scrape time from
 * the scanners' state and the nodes: kassa_chain_up, kassa_chain_height (the
 * scanner's cursor), kassa_chain_tip, kassa_chain_lag_blocks,
 * kassa_chain_last_scan_seconds (unix time), kassa_chain_reorgs_total and
 * kassa_chain_credited_off_chain.
 */
import { Gauge, type Registry } from 'prom-client';
import type { ChainHealth } from '../../modules/networks/index.js';
import type { Deps } from '../../deps.js';

type Reading = (h: ChainHealth) => number | null;

export function registerChainMetrics(registry: Registry, chainHealth: NonNullable<Deps['chainHealth']>): void {
  // prom-client collects every gauge of a scrape at once: they share one read of the nodes.
  let current: { at: number; health: ReturnType<typeof chainHealth> } | null = null;
  const read = () => {
    if (!current || Date.now() - current.at > 1000) current = { at: Date.now(), health: chainHealth() };
    return current.health;
  };
  const gauge = (name: string, help: string, value: Reading) =>
    new Gauge({
      name,
      help,
      labelNames: ['network'] as const,
      registers: [registry],
      async collect() {
        // A value unknown now (a node not answering: no tip, no lag) has no sample, rather than the last one it had.
        this.reset();
        for (const [network, h] of Object.entries(await read())) {
          const v = value(h);
          if (v !== null) this.set({ network }, v);
        }
      },
    });
  gauge('kassa_chain_up', '1 when the network node answered at the last scrape, else 0', (h) => (h.ok ? 1 : 0));
  gauge('kassa_chain_height', 'Highest block the scanner has scanned, per network', (h) => h.height);
  gauge('kassa_chain_tip', "The node's best block height, per network", (h) => h.tip);
  gauge('kassa_chain_lag_blocks', 'Blocks between the node tip and the scanner, per network', (h) => h.lag);
  gauge('kassa_chain_last_scan_seconds', 'Unix time of the last completed scan, per network', (h) => (h.lastScanAt ? h.lastScanAt.getTime() / 1000 : null));
  gauge('kassa_chain_reorgs_total', 'Chain reorganisations the scanner walked back, per network', (h) => h.reorgs);
  gauge(
    'kassa_chain_credited_off_chain',
    'Deposits credited and then reorganised off the best chain, not mined again, per network: their credit is still in the ledger, for an operator to review',
    (h) => h.creditedOffChain,
  );
}
