/**
 * The EVM signer (ETH, BSC): the only code that holds private keys. It reads
 * the mnemonic from a file only its owner may read, checks that it is the one
 * behind the configured xpub, and sends EIP-1559 transactions from the
 * treasury (`<xpub>/1/0`) or a deposit address (`<xpub>/0/i`).
 *
 * Crash safety: every transaction has an idempotency id. Its nonce is
 * allocated and its signed raw bytes stored in one database transaction
 * before any broadcast; a retry of the same id rebroadcasts those bytes
 * (same hash), never signs anew with another nonce. A fee bump is a
 * replacement with the same nonce, its bytes stored too. No node call happens
 * inside a database transaction.
 */
import type { HDKey } from '@scure/bip32';
import type postgres from 'postgres';
import {
  encodeFunctionData,
  formatUnits,
  getAddress,
  isAddress,
  keccak256,
  parseAbi,
  parseTransaction,
  type Address,
  TransactionReceiptNotFoundError,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DEFAULT_CONFIRMATIONS } from './config.rules.js';
import { accountKeyFromMnemonic, addressBook, childPrivateKey, type EvmAddressBook } from './keys.js';
import { readMnemonicFile } from '../mnemonic-file.js';
import { bumpedFees, checkFunds, gasTopUp, maxGasCost, nativeSweepValue, sweepFees, toBaseUnits, type Fees } from './signer.rules.js';
import { NATIVE_CURRENCY, type EvmNetwork, type HeldResult, type PayoutRequest, type PayoutResult, type PayoutSettlement, type TokenContract } from './types.js';

type Sql = postgres.Sql;

const ERC20 = parseAbi([
  'function transfer(address to, uint256 value) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
  'function decimals() view returns (uint8)',
]);

export type SignerOptions = {
  sql: Sql;
  network: EvmNetwork;
  client: PublicClient;
  /** `KASSA_SIGNER_MNEMONIC_FILE`. */
  mnemonicFile: string;
  /** `KASSA_<NET>_XPUB`: the mnemonic must derive exactly this account key. */
  xpub: string;
  tokens: TokenContract[];
  /**
   * `KASSA_<NET>_CONFIRMATIONS`: how deep a transaction's block must be before it is final. Until
   * then every pass looks its receipt up again (a reorganisation may take it away). Default: the
   * network's deposit default.
   */
  confirmations?: number;
};

export type SweepResult =
  | PayoutResult
  | { status: 'NOTHING' }
  /** The treasury's gas top-up is on its way: call again once it is mined. */
  | { status: 'GAS_SENT'; txHash: Hex };

/** A sender under the account: change 1 index 0 is the treasury, change 0 the deposit addresses. */
type KeyPath = { change: 0 | 1; index: number };

type Intent = {
  id: string;
  kind: 'PAYOUT' | 'SWEEP' | 'GAS_TOPUP';
  key: KeyPath;
  /** Recipient of the value: the token contract for a token transfer. */
  to: Address;
  value: bigint;
  data?: Hex;
  /** What the record shows: the currency and the amount moved, and to whom. */
  currency: string;
  amountBase: bigint;
  amount: string;
  beneficiary: Address;
  token?: { address: Address; currency: string };
  /** Fixed gas and fees (sweeps compute them from the balance); estimated otherwise. */
  gasLimit?: bigint;
  fees?: Fees;
};

/** What re-checking a MINED transaction reads of its row. */
type MinedRow = Pick<TxRow, 'id' | 'tx_hash' | 'block_number'>;

type TxRow = {
  id: string;
  status: 'HELD' | 'SIGNED' | 'SENT' | 'MINED';
  tx_hash: Hex | null;
  raw_tx: Hex | null;
  nonce: string | null;
  key_path: string;
  max_fee_per_gas: string | null;
  max_priority_fee_per_gas: string | null;
  block_number: string | null;
  success: boolean | null;
  held_currency: string | null;
  held_needed: string | null;
  held_available: string | null;
};

/**
 * The signer's account key, with no node call: refuses a readable-by-others file and a mnemonic that is
 * not the one behind the xpub.
 */
export function signerAccountKey(options: Pick<SignerOptions, 'mnemonicFile' | 'xpub' | 'network'>) {
  const account = accountKeyFromMnemonic(readMnemonicFile(options.mnemonicFile));
  const book = addressBook(options.xpub);
  if (account.publicExtendedKey !== book.normalizedXpub) {
    throw new Error(`KASSA_SIGNER_MNEMONIC_FILE does not derive KASSA_${options.network}_XPUB (m/44'/60'/0'): refusing to sign`);
  }
  return { account, book };
}

/** Opens the signer (`signerAccountKey`'s checks, then the node's chain id). */
export async function openEvmSigner(options: SignerOptions): Promise<EvmSigner> {
  const { account, book } = signerAccountKey(options);
  const chainId = await options.client.getChainId();
  return new EvmSigner(options, account, book, chainId);
}

export class EvmSigner {
  readonly treasury: Address;
  private readonly sql: Sql;
  private readonly client: PublicClient;
  private readonly network: EvmNetwork;
  private readonly native: string;
  private readonly confirmations: number;
  private readonly decimals = new Map<string, number>();

  constructor(
    private readonly options: SignerOptions,
    private readonly account: HDKey,
    private readonly book: EvmAddressBook,
    private readonly chainId: number,
  ) {
    this.sql = options.sql;
    this.client = options.client;
    this.network = options.network;
    this.native = NATIVE_CURRENCY[options.network];
    this.confirmations = options.confirmations ?? DEFAULT_CONFIRMATIONS[options.network];
    this.treasury = book.treasuryAddress();
  }

  /** Pay from the treasury. Same id → same transaction (rebroadcast), never a second one. */
  async payout(request: PayoutRequest): Promise<PayoutResult> {
    const signed = await this.signPayout(request);
    // Stored but maybe never sent (a crash), or sent and not yet mined: (re)broadcast the same bytes.
    if (signed.status === 'SIGNED' || signed.status === 'SENT') return this.broadcast(request.id);
    return signed;
  }

  /**
   * Sign and store a payout without broadcasting it (`payout` = this, then
   * `broadcast`). Returns the stored transaction's hash, or HELD.
   */
  async signPayout(request: PayoutRequest): Promise<PayoutResult | { status: 'SIGNED'; txHash: Hex; nonce: number }> {
    if (request.network !== this.network) throw new Error(`payout on ${request.network} sent to the ${this.network} signer`);
    if (!isAddress(request.toAddress, { strict: false })) throw new Error(`not an address: ${request.toAddress}`);
    const to = getAddress(request.toAddress);
    const existing = await this.row(request.id);
    if (existing && existing.status !== 'HELD') return this.storedOrSigned(existing);
    const treasury: KeyPath = { change: 1, index: 0 };
    if (request.currency === this.native) {
      const value = toBaseUnits(request.amount, 18);
      return this.sign({ id: request.id, kind: 'PAYOUT', key: treasury, to, value, currency: this.native, amountBase: value, amount: formatUnits(value, 18), beneficiary: to });
    }
    const token = this.token(request.currency);
    const units = toBaseUnits(request.amount, await this.tokenDecimals(token));
    return this.sign({
      id: request.id,
      kind: 'PAYOUT',
      key: treasury,
      to: token.address,
      value: 0n,
      data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [to, units] }),
      currency: token.currency,
      amountBase: units,
      amount: formatUnits(units, await this.tokenDecimals(token)),
      beneficiary: to,
      token,
    });
  }

  /** Send the stored raw transaction (again). Safe to call any number of times. */
  async broadcast(id: string): Promise<PayoutResult> {
    const row = await this.row(id);
    if (!row) throw new Error(`no transaction ${id}`);
    if (row.status === 'HELD' || row.status === 'MINED' || !row.raw_tx) return this.stored(row);
    try {
      await this.client.sendRawTransaction({ serializedTransaction: row.raw_tx });
    } catch (error) {
      // Already in the pool, or already mined (its nonce is used): not a failure of this broadcast.
      if (!isAlreadyInPool(error) && !isNonceUsed(error)) throw error;
    }
    await this.sql`update evm_transactions set status = 'SENT', updated_at = now() where id = ${id} and status = 'SIGNED'`;
    return this.stored((await this.row(id))!);
  }

  /**
   * The signer's pass over its unmined transactions (every minute): each is looked up first (a
   * replacement may be the one mined). A payout unmined for `bumpAfterMs` since its last signing,
   * while the market asks more than it offers, is replaced at the market's fees (`bumpFee`); the
   * others are sent again, same bytes. Sweeps and gas top-ups are only sent again: a sweep's value
   * is its balance less the gas, so a dearer replacement could not be funded.
   * One transaction failing leaves the others tended; the failures are thrown together at the end,
   * for the log. A fee the node refuses now is no failure here: the bump is on its way.
   * Also the recovery after a crash or a node outage. Returns how many unmined ones it sent.
   */
  async tendPending(bumpAfterMs: number, now: Date = new Date()): Promise<number> {
    // Mined but not deep yet, of any kind: a payout, and as much a gas top-up or a sweep, since they
    // share the treasury's (or a deposit address's) nonces. One whose block was reorganised away is
    // SENT again here, and sent below; left MINED, every later nonce of its sender would wait for ever.
    const tip = await this.client.getBlockNumber({ cacheTime: 0 });
    const shallow = await this.sql<MinedRow[]>`
      select id, tx_hash, block_number from evm_transactions
       where network = ${this.network} and status = 'MINED' and block_number > ${String(tip - BigInt(this.confirmations) + 1n)}`;
    for (const row of shallow) await this.recheckMined(row);
    const open = await this.sql<{ id: string; kind: 'PAYOUT' | 'SWEEP' | 'GAS_TOPUP'; max_fee_per_gas: string; max_priority_fee_per_gas: string; signed_at: Date | string | null }[]>`
      select t.id, t.kind, t.max_fee_per_gas::text, t.max_priority_fee_per_gas::text,
             (select max(a.created_at) from evm_transaction_attempts a where a.transaction_id = t.id) as signed_at
        from evm_transactions t
       where t.network = ${this.network} and t.status in ('SIGNED', 'SENT') order by t.nonce`;
    const failures: unknown[] = [];
    let sent = 0;
    let market: Fees | undefined;
    for (const row of open) {
      try {
        if ((await this.refresh(row.id)).status === 'MINED') continue;
        const waited = row.signed_at !== null && now.getTime() - new Date(row.signed_at).getTime() >= bumpAfterMs;
        if (row.kind === 'PAYOUT' && waited) {
          market ??= await this.client.estimateFeesPerGas();
          if (market.maxFeePerGas > BigInt(row.max_fee_per_gas) || market.maxPriorityFeePerGas > BigInt(row.max_priority_fee_per_gas)) {
            await this.bumpFee(row.id);
            sent++;
            continue;
          }
        }
        await this.broadcast(row.id);
        sent++;
      } catch (error) {
        if (!isFeeRefusal(error)) failures.push(error);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `${this.network}: ${failures.length} unmined transaction(s) could not be tended`);
    return sent;
  }

  /**
   * Payouts replaced at least once, with the hash each now stands for (the one mined, or the
   * latest sent), signed or mined within `withinDays`: what the app's records of them should show.
   * Read from the stored rows, so a record missed once (a crash, a failed write) is caught up by
   * the next pass.
   */
  async replacedPayouts(withinDays = 7): Promise<{ id: string; txHash: Hex }[]> {
    return this.sql<{ id: string; txHash: Hex }[]>`
      select t.id, t.tx_hash as "txHash" from evm_transactions t
       where t.network = ${this.network} and t.kind = 'PAYOUT' and t.tx_hash is not null
         and t.updated_at > now() - make_interval(days => ${withinDays})
         and (select count(*) from evm_transaction_attempts a where a.transaction_id = t.id) > 1`;
  }

  /**
   * Where a payout stands for its withdrawal or refund: FINAL once its block is `confirmations`
   * deep on the node's best chain (as deposits are counted: the block holding it is the first),
   * with whether it succeeded (a token transfer can revert: mined, its gas spent, nothing moved);
   * PENDING before, while HELD, and when nothing was signed for this id yet.
   */
  async settlement(id: string): Promise<PayoutSettlement> {
    let row = await this.row(id);
    if (row?.status === 'SIGNED' || row?.status === 'SENT') {
      await this.refresh(id);
      row = await this.row(id);
    }
    // HELD, or nothing signed for it yet: on its way too.
    if (row?.status !== 'MINED') return { state: 'PENDING' };
    const mined = await this.recheckMined(row);
    if (!mined) return { state: 'PENDING' };
    const tip = await this.client.getBlockNumber({ cacheTime: 0 });
    if (tip - mined.blockNumber + 1n < BigInt(this.confirmations)) return { state: 'PENDING' };
    return { state: 'FINAL', txHash: mined.txHash, success: mined.success, at: mined.at };
  }

  /**
   * A MINED row's transaction looked up again. Gone from the best chain (the node has no receipt
   * for it now): the row is SENT again, so `tendPending` sends its bytes again (no later nonce of
   * its sender can be mined before it, so nothing else is reordered). In another block: the row
   * follows it. A receipt whose block is not the one the node has at that height (a provider
   * answering from a stale fork) settles nothing yet. Any other failure of the node is thrown.
   */
  private async recheckMined(row: MinedRow): Promise<{ txHash: Hex; blockNumber: bigint; success: boolean; at: Date } | null> {
    const { id } = row;
    const hash = row.tx_hash!;
    const receipt = await this.client.getTransactionReceipt({ hash }).catch((error: unknown) => {
      if (error instanceof TransactionReceiptNotFoundError) return null;
      throw error;
    });
    if (!receipt) {
      await this.sql`
        update evm_transactions set status = 'SENT', block_number = null, success = null, fee_paid = null, updated_at = now()
         where id = ${id} and status = 'MINED' and tx_hash = ${hash}`;
      return null;
    }
    const success = receipt.status === 'success';
    if (String(receipt.blockNumber) !== row.block_number) {
      await this.sql`
        update evm_transactions set block_number = ${String(receipt.blockNumber)}, success = ${success},
               fee_paid = ${String(receipt.gasUsed * receipt.effectiveGasPrice)}, updated_at = now()
         where id = ${id} and status = 'MINED' and tx_hash = ${hash}`;
    }
    const block = await this.client.getBlock({ blockNumber: receipt.blockNumber });
    if (block.hash !== receipt.blockHash) return null;
    return { txHash: hash, blockNumber: receipt.blockNumber, success, at: new Date(Number(block.timestamp) * 1000) };
  }

  /** Mined yet? Looks at every signed version (a replacement may be the one mined) and records the one found. */
  async refresh(id: string): Promise<PayoutResult> {
    const row = await this.row(id);
    if (!row) throw new Error(`no transaction ${id}`);
    if (row.status !== 'SIGNED' && row.status !== 'SENT') return this.stored(row);
    const attempts = await this.sql<{ tx_hash: Hex }[]>`select tx_hash from evm_transaction_attempts where transaction_id = ${id}`;
    for (const { tx_hash } of attempts) {
      const receipt = await this.client.getTransactionReceipt({ hash: tx_hash }).catch(() => null);
      if (!receipt) continue;
      await this.sql`
        update evm_transactions
           set status = 'MINED', tx_hash = ${tx_hash}, block_number = ${String(receipt.blockNumber)}, success = ${receipt.status === 'success'},
               fee_paid = ${String(receipt.gasUsed * receipt.effectiveGasPrice)},
               raw_tx = (select raw_tx from evm_transaction_attempts where tx_hash = ${tx_hash}), updated_at = now()
         where id = ${id}`;
      return this.stored((await this.row(id))!);
    }
    return this.stored(row);
  }

  /**
   * Replace a pending transaction with the same one at higher fees (same nonce, so at most one of
   * them is ever mined). The replacement is stored before it is sent; the row moves to it only once
   * the node took it (and only from the version it was read at: a concurrent signer or a `refresh`
   * that found it mined wins), so a refused replacement leaves the previous bytes in force. Not when
   * the nonce is already used (the previous version, or another, was mined): then it is refreshed.
   * HELD, and nothing signed, when the treasury cannot fund the dearer fees.
   */
  async bumpFee(id: string): Promise<PayoutResult> {
    const row = await this.row(id);
    if (!row || (row.status !== 'SENT' && row.status !== 'SIGNED') || !row.raw_tx) throw new Error(`${id} is not a pending transaction`);
    const previous = parseTransaction(row.raw_tx);
    const from = this.addressOf(parseKeyPath(row.key_path));
    const [current, used, nativeBalance] = await Promise.all([
      this.client.estimateFeesPerGas(),
      this.client.getTransactionCount({ address: from, blockTag: 'latest' }),
      this.client.getBalance({ address: from }),
    ]);
    if (used > Number(row.nonce)) return this.refresh(id);
    const fees = bumpedFees({ maxFeePerGas: BigInt(row.max_fee_per_gas!), maxPriorityFeePerGas: BigInt(row.max_priority_fee_per_gas!) }, current);
    const held = checkFunds({ nativeCurrency: this.native, nativeBalance, gasCost: maxGasCost(previous.gas!, fees), value: previous.value ?? 0n });
    if (held) return held;
    const raw = await this.signRaw(parseKeyPath(row.key_path), {
      to: previous.to!, value: previous.value ?? 0n, data: previous.data, nonce: Number(row.nonce), gas: previous.gas!, fees,
    });
    const hash = keccak256(raw);
    await this.sql`
      insert into evm_transaction_attempts (tx_hash, transaction_id, raw_tx, max_fee_per_gas, max_priority_fee_per_gas)
      values (${hash}, ${id}, ${raw}, ${String(fees.maxFeePerGas)}, ${String(fees.maxPriorityFeePerGas)})
      on conflict (tx_hash) do nothing`;
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
    } catch (error) {
      // Its nonce was used meanwhile (the previous version mined): nothing replaced.
      if (isNonceUsed(error)) return this.refresh(id);
      if (!isAlreadyInPool(error)) throw error;
    }
    await this.sql`
      update evm_transactions set raw_tx = ${raw}, tx_hash = ${hash}, status = 'SENT',
             max_fee_per_gas = ${String(fees.maxFeePerGas)}, max_priority_fee_per_gas = ${String(fees.maxPriorityFeePerGas)}, updated_at = now()
       where id = ${id} and status in ('SIGNED', 'SENT') and tx_hash = ${row.tx_hash}`;
    return this.stored((await this.row(id))!);
  }

  /** Sweep the native coin of deposit address `index` to the treasury (everything but the gas). */
  async sweepNative(id: string, index: number): Promise<SweepResult> {
    const existing = await this.row(id);
    if (existing && existing.status !== 'HELD') return this.broadcast(id);
    const from = this.book.depositAddress(index);
    const [balance, fees] = await Promise.all([this.client.getBalance({ address: from }), this.client.estimateFeesPerGas()]);
    const gasLimit = 21_000n;
    const value = nativeSweepValue(balance, gasLimit, fees);
    if (value === null) return { status: 'NOTHING' };
    const signed = await this.sign({
      id, kind: 'SWEEP', key: { change: 0, index }, to: this.treasury, value, currency: this.native, amountBase: value,
      amount: formatUnits(value, 18), beneficiary: this.treasury, gasLimit, fees,
    });
    return signed.status === 'SIGNED' ? this.broadcast(id) : signed;
  }

  /**
   * Sweep a token balance of deposit address `index` to the treasury. The
   * address usually holds no coin for gas: the treasury first sends exactly
   * the shortfall (id `<id>:gas:<n>`), and this answers GAS_SENT; call again
   * once that is mined, and the sweep itself (id `<id>`) goes out.
   */
  async sweepToken(id: string, index: number, currency: string): Promise<SweepResult> {
    const existing = await this.row(id);
    if (existing && existing.status !== 'HELD') return this.broadcast(id);
    const token = this.token(currency);
    const from = this.book.depositAddress(index);
    const balance = await this.client.readContract({ address: token.address, abi: ERC20, functionName: 'balanceOf', args: [from] });
    if (balance === 0n) return { status: 'NOTHING' };

    // A top-up still on its way: wait for it rather than sending another.
    const topUps = await this.sql<{ id: string; status: TxRow['status'] }[]>`
      select id, status from evm_transactions where id like ${`${id}:gas:%`} order by created_at`;
    const last = topUps[topUps.length - 1];
    if (last && last.status !== 'HELD') {
      const state = await this.refresh(last.id);
      if (state.status === 'SENT') {
        await this.broadcast(last.id);
        return { status: 'GAS_SENT', txHash: state.txHash };
      }
    }

    const data = encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [this.treasury, balance] });
    const [gasLimit, current, block, native] = await Promise.all([
      this.client.estimateGas({ account: from, to: token.address, data }),
      this.client.estimateFeesPerGas(),
      this.client.getBlock(),
      this.client.getBalance({ address: from }),
    ]);
    const fees = sweepFees(gasLimit, current, block.baseFeePerGas ?? 0n, native);
    if (!fees) {
      const topUp = gasTopUp(gasLimit, current, native);
      const gasId = last && last.status === 'HELD' ? last.id : `${id}:gas:${topUps.length + 1}`;
      const sent = await this.sign({
        id: gasId, kind: 'GAS_TOPUP', key: { change: 1, index: 0 }, to: from, value: topUp, currency: this.native,
        amountBase: topUp, amount: formatUnits(topUp, 18), beneficiary: from,
      });
      if (sent.status !== 'SIGNED') return sent;
      await this.broadcast(gasId);
      return { status: 'GAS_SENT', txHash: sent.txHash };
    }
    const decimals = await this.tokenDecimals(token);
    const signed = await this.sign({
      id, kind: 'SWEEP', key: { change: 0, index }, to: token.address, value: 0n, data, currency: token.currency, amountBase: balance,
      amount: formatUnits(balance, decimals), beneficiary: this.treasury, token, gasLimit, fees,
    });
    return signed.status === 'SIGNED' ? this.broadcast(id) : signed;
  }

  /** The stored state of a transaction id, as a result (undefined when unknown). */
  async get(id: string): Promise<PayoutResult | { status: 'SIGNED'; txHash: Hex; nonce: number } | undefined> {
    const row = await this.row(id);
    return row ? this.storedOrSigned(row) : undefined;
  }

  // ---- internals ----

  /**
   * Node calls first (fees, gas, balances, the chain's nonce), then one
   * database transaction: allocate the nonce, sign, store. Insufficient
   * funds store a HELD row instead (no nonce used), visible to operators.
   */
  private async sign(intent: Intent): Promise<HeldResult | { status: 'SIGNED'; txHash: Hex; nonce: number } | PayoutResult> {
    const from = this.addressOf(intent.key);
    const [fees, nativeBalance, tokenBalance, chainNonce, minedNonce] = await Promise.all([
      intent.fees ?? this.client.estimateFeesPerGas(),
      this.client.getBalance({ address: from }),
      intent.token
        ? this.client.readContract({ address: intent.token.address, abi: ERC20, functionName: 'balanceOf', args: [from] })
        : Promise.resolve(0n),
      this.client.getTransactionCount({ address: from, blockTag: 'pending' }),
      this.client.getTransactionCount({ address: from, blockTag: 'latest' }),
    ]);
    const tokenFunds = intent.token ? { currency: intent.token.currency, balance: tokenBalance, amount: intent.amountBase } : undefined;
    // Short of tokens: held before estimating gas (the estimate of a transfer that would revert fails).
    const tokenShort = tokenFunds ? checkFunds({ nativeCurrency: this.native, nativeBalance, gasCost: 0n, value: 0n, token: tokenFunds }) : null;
    if (tokenShort) return this.hold(intent, from, tokenShort);
    const gasLimit = intent.gasLimit ?? (await this.client.estimateGas({ account: from, to: intent.to, value: intent.value, data: intent.data }));

    // The funds check proper: under the nonce's lock, below.
    let held: HeldResult | null = null;
    let result: { status: 'SIGNED'; txHash: Hex; nonce: number } | undefined;
    await this.sql.begin(async (tx) => {
      await tx`
        insert into evm_nonces (network, address, next_nonce) values (${this.network}, ${from}, ${String(chainNonce)})
        on conflict do nothing`;
      const [lock] = await tx<{ next_nonce: string }[]>`
        select next_nonce from evm_nonces where network = ${this.network} and address = ${from} for update`;
      // The balances above are the latest block's: what this sender signed and has not seen mined yet
      // (a nonce at or above the chain's mined count) is still to leave them. Read under the nonce's
      // lock, so two payouts signing at once each see the other. Without it, a second payout the
      // treasury could not cover was signed and sent, never mined, and held every later nonce.
      const [out] = await tx<{ native: string; gas: string; token: string }[]>`
        select coalesce(sum(amount_base) filter (where currency = ${this.native}), 0)::text as native,
               coalesce(sum(gas_limit * max_fee_per_gas), 0)::text as gas,
               coalesce(sum(amount_base) filter (where currency = ${intent.token?.currency ?? ''}), 0)::text as token
          from evm_transactions
         where network = ${this.network} and from_address = ${from} and status in ('SIGNED', 'SENT') and nonce >= ${minedNonce}`;
      const inFlight = checkFunds({
        nativeCurrency: this.native,
        nativeBalance: nativeBalance - BigInt(out!.native) - BigInt(out!.gas),
        gasCost: maxGasCost(gasLimit, fees),
        value: intent.value,
        token: tokenFunds && { ...tokenFunds, balance: tokenFunds.balance - BigInt(out!.token) },
      });
      if (inFlight) {
        held = inFlight;
        return;
      }
      // The stored nonce leads (signed, maybe not yet broadcast); the chain's wins if the key was used elsewhere.
      const stored = BigInt(lock!.next_nonce);
      const nonce = Number(stored > BigInt(chainNonce) ? stored : BigInt(chainNonce));
      const raw = await this.signRaw(intent.key, { to: intent.to, value: intent.value, data: intent.data, nonce, gas: gasLimit, fees });
      const hash = keccak256(raw);
      const claimed = await tx`
        insert into evm_transactions (id, network, kind, from_address, key_path, to_address, currency, amount, amount_base, status,
                                      nonce, tx_hash, raw_tx, gas_limit, max_fee_per_gas, max_priority_fee_per_gas)
        values (${intent.id}, ${this.network}, ${intent.kind}, ${from}, ${formatKeyPath(intent.key)}, ${intent.beneficiary}, ${intent.currency},
                ${intent.amount}, ${String(intent.amountBase)}, 'SIGNED', ${nonce}, ${hash}, ${raw}, ${String(gasLimit)},
                ${String(fees.maxFeePerGas)}, ${String(fees.maxPriorityFeePerGas)})
        on conflict (id) do update set status = 'SIGNED', nonce = excluded.nonce, tx_hash = excluded.tx_hash, raw_tx = excluded.raw_tx,
               gas_limit = excluded.gas_limit, max_fee_per_gas = excluded.max_fee_per_gas,
               max_priority_fee_per_gas = excluded.max_priority_fee_per_gas, held_currency = null, held_needed = null,
               held_available = null, updated_at = now()
         where evm_transactions.status = 'HELD'
        returning id`;
      // Another process signed this id meanwhile: keep its transaction, allocate nothing.
      if (claimed.length === 0) return;
      await tx`
        insert into evm_transaction_attempts (tx_hash, transaction_id, raw_tx, max_fee_per_gas, max_priority_fee_per_gas)
        values (${hash}, ${intent.id}, ${raw}, ${String(fees.maxFeePerGas)}, ${String(fees.maxPriorityFeePerGas)})`;
      await tx`update evm_nonces set next_nonce = ${nonce + 1} where network = ${this.network} and address = ${from}`;
      result = { status: 'SIGNED', txHash: hash, nonce };
    });
    if (held) return this.hold(intent, from, held);
    return result ?? this.storedOrSigned((await this.row(intent.id))!);
  }

  /** Store (or refresh) a HELD row naming what is short: no nonce used, visible to operators. */
  private async hold(intent: Intent, from: Address, held: HeldResult): Promise<HeldResult> {
    await this.sql`
      insert into evm_transactions (id, network, kind, from_address, key_path, to_address, currency, amount, amount_base, status, held_currency, held_needed, held_available)
      values (${intent.id}, ${this.network}, ${intent.kind}, ${from}, ${formatKeyPath(intent.key)}, ${intent.beneficiary}, ${intent.currency},
              ${intent.amount}, ${String(intent.amountBase)}, 'HELD', ${held.currency}, ${String(held.needed)}, ${String(held.available)})
      on conflict (id) do update set held_currency = excluded.held_currency, held_needed = excluded.held_needed,
             held_available = excluded.held_available, updated_at = now()
       where evm_transactions.status = 'HELD'`;
    return held;
  }

  private async signRaw(key: KeyPath, tx: { to: Address; value: bigint; data: Hex | undefined; nonce: number; gas: bigint; fees: Fees }): Promise<Hex> {
    const signer = privateKeyToAccount(childPrivateKey(this.account, key.change, key.index));
    return signer.signTransaction({
      type: 'eip1559',
      chainId: this.chainId,
      nonce: tx.nonce,
      to: tx.to,
      value: tx.value,
      data: tx.data,
      gas: tx.gas,
      maxFeePerGas: tx.fees.maxFeePerGas,
      maxPriorityFeePerGas: tx.fees.maxPriorityFeePerGas,
    });
  }

  private addressOf(key: KeyPath): Address {
    return key.change === 1 ? this.treasury : this.book.depositAddress(key.index);
  }

  private token(currency: string): TokenContract {
    const token = this.options.tokens.find((t) => t.currency === currency);
    if (!token) throw new Error(`${currency} is not a configured token on ${this.network}`);
    return token;
  }

  private async tokenDecimals(token: TokenContract): Promise<number> {
    let decimals = this.decimals.get(token.address);
    if (decimals === undefined) {
      decimals = Number(await this.client.readContract({ address: token.address, abi: ERC20, functionName: 'decimals' }));
      this.decimals.set(token.address, decimals);
    }
    return decimals;
  }

  private async row(id: string): Promise<TxRow | undefined> {
    const [row] = await this.sql<TxRow[]>`
      select id, status, tx_hash, raw_tx, nonce, key_path, max_fee_per_gas, max_priority_fee_per_gas, block_number, success,
             held_currency, held_needed, held_available
        from evm_transactions where id = ${id}`;
    return row;
  }

  private stored(row: TxRow): PayoutResult {
    const result = this.storedOrSigned(row);
    // SIGNED (stored, not yet broadcast) is reported as SENT only by broadcast(); here the caller broadcasts next.
    return result.status === 'SIGNED' ? { status: 'SENT', txHash: result.txHash, nonce: result.nonce } : result;
  }

  private storedOrSigned(row: TxRow): PayoutResult | { status: 'SIGNED'; txHash: Hex; nonce: number } {
    if (row.status === 'HELD') {
      return { status: 'HELD', reason: 'INSUFFICIENT_FUNDS', currency: row.held_currency!, needed: BigInt(row.held_needed!), available: BigInt(row.held_available!) };
    }
    const txHash = row.tx_hash!;
    const nonce = Number(row.nonce);
    if (row.status === 'MINED') return { status: 'MINED', txHash, nonce, blockNumber: BigInt(row.block_number!), success: row.success === true };
    return { status: row.status, txHash, nonce };
  }
}

function formatKeyPath(key: KeyPath): string {
  return `${key.change}/${key.index}`;
}

/** A node's error as text, with viem's details (where the node's own words are). */
function nodeMessage(error: unknown): string {
  return error instanceof Error ? `${error.message} ${(error as { details?: string }).details ?? ''}` : String(error);
}

/** The node has these bytes already (its pool, or a block). */
const isAlreadyInPool = (error: unknown) => /already known|known transaction|already imported/i.test(nodeMessage(error));
/** The nonce is taken by a mined transaction (this one, another version of it, or another). */
const isNonceUsed = (error: unknown) => /nonce too low/i.test(nodeMessage(error));
/** The node refused the fees (below what blocks take now, or below its pool's floor): a bump is due, not a fault. */
const isFeeRefusal = (error: unknown) => /less than block base fee|underpriced/i.test(nodeMessage(error));

function parseKeyPath(path: string): KeyPath {
  const [change, index] = path.split('/').map(Number);
  if ((change !== 0 && change !== 1) || index === undefined || !Number.isInteger(index)) throw new Error(`bad key path ${path}`);
  return { change, index };
}
