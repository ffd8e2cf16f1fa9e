/**
 * ETH and BSC behind the chain port: the EVM engine (../evm) wired to
 * Kassa. Watch-only addresses from KASSA_<NET>_XPUB, a block scanner that
 * reports to the deposit ingestion, and, only where the mnemonic is given
 * (the signer role), payouts and sweeps to the treasury `<xpub>/1/0`.
 */
import type { Sql } from 'postgres';
import { getAddress } from 'viem';
import { SHARED_ADDRESS_SEQUENCE, TOKEN_CONTRACTS, eip681Uri, validateAddress } from '../../../modules/networks/index.js';
import type { Broadcast, BroadcastResult, SweepOutcome, SweepRequest } from '../../../modules/networks/ports.js';
import {
  EvmScanner, NATIVE_CURRENCY, addressBook, createEvmClient, openEvmSigner, type EvmNetworkConfig, type EvmSigner, type TokenContract,
} from '../evm/index.js';
import { PayoutHeldError, type LiveChain, type LiveSink } from './live-chain.js';
import { LiveChainConfigError } from './live-config.js';
import { DerivedAddressSet } from './watched-addresses.js';
import { PROBE_TIMEOUT_MS } from '../utxo/index.js';
import { withTimeout } from '../../../platform/with-timeout.js';

/** The catalog's mainnet contracts, unless KASSA_<NET>_TOKENS replaces them. */
function tokensOf(config: EvmNetworkConfig): TokenContract[] {
  if (config.tokens) return config.tokens;
  return Object.entries(TOKEN_CONTRACTS[config.network] ?? {}).map(([currency, t]) => ({ currency, address: getAddress(t.contract) }));
}

/** What a network is configured to take, known without its node: its coin and its token contracts' currencies. */
export const evmCurrencies = (config: EvmNetworkConfig): string[] => [NATIVE_CURRENCY[config.network], ...tokensOf(config).map((t) => t.currency)];

export async function openEvmChain(
  config: EvmNetworkConfig,
  options: { sql: Sql; sink: LiveSink; mnemonicFile?: string; rpcTimeoutMs?: number },
): Promise<LiveChain> {
  const { network } = config;
  const client = createEvmClient(config.rpcUrl, { timeoutMs: options.rpcTimeoutMs ?? 10_000 });
  const book = addressBook(config.xpub);
  const tokens = tokensOf(config);
  const native = NATIVE_CURRENCY[network];
  // A token contract missing on this chain (the catalog's mainnet ones on a test chain) would stop every scan: say so at start.
  for (const token of tokens) {
    const code = await client.getCode({ address: token.address });
    if (!code || code === '0x') {
      throw new LiveChainConfigError(
        `KASSA_${network}_TOKENS: no ${token.currency} contract at ${token.address} on this node's chain (id ${await client.getChainId()}); ` +
          `list the contracts of this chain, e.g. KASSA_${network}_TOKENS=USDT=0x…`,
      );
    }
  }
  const watched = new DerivedAddressSet(options.sql, SHARED_ADDRESS_SEQUENCE, book.depositAddress);
  const scanner = new EvmScanner({
    sql: options.sql,
    network,
    client,
    watched,
    ownSenders: new Set([book.treasuryAddress().toLowerCase()]),
    tokens,
    confirmations: config.confirmations,
    sink: (report) => options.sink({ ...report, destinationTag: null }),
  });
  // The checkout's EIP-681 URIs name this node's chain and contracts (a wallet pays on the chain the URI names).
  const chainId = await client.getChainId();
  const uriTokens = new Map([...(await scanner.tokens()).entries()].map(([address, t]) => [t.currency, { contract: getAddress(address), decimals: t.decimals }]));
  // Only the signer role holds the key: opening it checks the mnemonic derives this xpub.
  const signer: EvmSigner | null = options.mnemonicFile
    ? await openEvmSigner({ sql: options.sql, network, client, xpub: config.xpub, tokens, mnemonicFile: options.mnemonicFile, confirmations: config.confirmations })
    : null;
  const needSigner = (): EvmSigner => {
    if (!signer) throw new Error(`${network}: payouts are signed by the signer role (--role=signer with KASSA_SIGNER_MNEMONIC_FILE)`);
    return signer;
  };

  /** Sweeps of one address go one at a time: a second before the first is mined would spend the same balance. */
  async function earlierSweepPending(id: string, from: string): Promise<boolean> {
    const open = await options.sql<{ id: string }[]>`
      select id from evm_transactions
       where network = ${network} and lower(from_address) = ${from.toLowerCase()} and status in ('SIGNED', 'SENT') and id <> ${id}`;
    for (const row of open) {
      if ((await needSigner().refresh(row.id)).status !== 'MINED') return true;
    }
    return false;
  }

  return {
    network,
    confirmations: config.confirmations,
    addressSequence: SHARED_ADDRESS_SEQUENCE,
    port: {
      network,
      async broadcast(tx: Broadcast): Promise<BroadcastResult> {
        const result = await needSigner().payout({ id: tx.id, network, currency: tx.currency, toAddress: tx.toAddress, amount: tx.amount });
        if (result.status === 'HELD') {
          throw new PayoutHeldError(
            `${network} treasury ${book.treasuryAddress()} lacks ${result.currency}: needs ${result.needed}, holds ${result.available} (base units); the payout waits`,
          );
        }
        return { txHash: result.txHash, confirmedAt: null };
      },
      async sweep(request: SweepRequest): Promise<SweepOutcome> {
        const s = needSigner();
        const id = `sweep:${network}:${request.txHash}:${request.outputIndex}`;
        if (await earlierSweepPending(id, book.depositAddress(request.addressIndex))) return 'WAIT';
        const result =
          request.currency === native ? await s.sweepNative(id, request.addressIndex) : await s.sweepToken(id, request.addressIndex, request.currency);
        if (result.status === 'HELD') {
          throw new PayoutHeldError(`${network} sweep ${id} waits: the treasury lacks ${result.currency} for gas (needs ${result.needed}, holds ${result.available})`);
        }
        return result.status === 'GAS_SENT' ? 'WAIT' : 'DONE';
      },
    },
    offers: (currency) => currency === native || tokens.some((t) => t.currency === currency),
    depositAddress: (index) => ({ address: book.depositAddress(index) }),
    validateAddress: (address) => validateAddress(network, address),
    paymentUri: (p) => eip681Uri(chainId, p, uriTokens.get(p.currency)),
    async scan() {
      await watched.refresh();
      await scanner.tick();
    },
    async health() {
      const status = await scanner.status();
      const height = status.height === null ? null : Number(status.height);
      const base = { height, lastScanAt: status.lastScanAt, reorgs: status.reorgs, creditedOffChain: await scanner.creditedOffChain() };
      try {
        // As for the Bitcoin family: a hung node shows as down within a readiness probe's time.
        const tip = Number(await withTimeout(client.getBlockNumber({ cacheTime: 0 }), PROBE_TIMEOUT_MS, () => new Error(`${network} node: no answer in ${PROBE_TIMEOUT_MS} ms`)));
        return { ok: true, ...base, tip, lag: height === null ? null : Math.max(0, tip - height) };
      } catch (error) {
        return { ok: false, ...base, tip: null, lag: null, error: error instanceof Error ? error.message.split('\n')[0] : String(error) };
      }
    },
    async rebroadcast() {
      if (signer) await signer.tendPending(config.feeBumpAfterS * 1000);
    },
    replacedPayouts: async () => (signer ? signer.replacedPayouts() : []),
    settlement: (id) => needSigner().settlement(id),
    async close() {},
  };
}
