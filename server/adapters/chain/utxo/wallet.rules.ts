/**
 * Payout decisions as pure functions: the fee rate, transaction size estimates and coin selection.
 * Fee rates are integers in sat per 1000 vbytes (sat/kvB), so no fraction is ever a float.
 * (btc-signer's `selectUTXO` was not used: it cannot size BCH's CashAddr/FORKID transactions, and
 * one rule for the three networks is simpler to test.)
 */
import { Decimal } from 'decimal.js';
import { toBaseUnits } from './amounts.js';

/** "10" sat/vB (the operator's unit for KASSA_<NET>_FALLBACK_FEE_RATE) → sat/kvB. */
export function satPerVbToKvb(satPerVb: string): bigint {
  const v = new Decimal(satPerVb);
  if (!v.isFinite() || v.lte(0)) throw new Error(`fee rate must be a positive number of sat/vB, got "${satPerVb}"`);
  return BigInt(v.mul(1000).ceil().toFixed(0));
}

/** sat/kvB → "10.5" sat/vB, as a payout's rate is stored (exact: a kvB is 1,000 vB). */
export function kvbToSatPerVb(satPerKvb: bigint): string {
  return new Decimal(satPerKvb.toString()).div(1000).toFixed();
}

export type FeeEstimate = { feerate?: string; errors?: string[] };

/**
 * The rate to pay: the node's `estimatesmartfee` answer (coin per kvB) when it has one, else the
 * configured fallback; never below the floor (the relay minimum).
 */
export function chooseFeeRate(
  estimate: FeeEstimate | null,
  fallbackSatPerKvb: bigint,
  floorSatPerKvb: bigint,
): { satPerKvb: bigint; source: 'estimate' | 'fallback' } {
  const estimated = estimate?.feerate !== undefined && !(estimate.errors?.length) ? toBaseUnits(estimate.feerate) : null;
  const rate = estimated !== null && estimated > 0n ? estimated : fallbackSatPerKvb;
  return { satPerKvb: rate < floorSatPerKvb ? floorSatPerKvb : rate, source: estimated !== null && estimated > 0n ? 'estimate' : 'fallback' };
}

/** fee = ceil(vsize × rate / 1000). */
export function feeFor(vsize: number, satPerKvb: bigint): bigint {
  return (BigInt(vsize) * satPerKvb + 999n) / 1000n;
}

/** Virtual sizes in vbytes (BCH has no witness: bytes). */
export const SIZES = {
  p2wpkh: { overhead: 11, input: 68, output: 31 }, // 10.5 rounded up; 67.75 rounded up
  'p2pkh-cashaddr': { overhead: 10, input: 148, output: 34 },
} as const;

/** Size of an output by its script length: 8 value + 1 length + script. */
export function outputSize(scriptLength: number): number {
  return 8 + 1 + scriptLength;
}

type Sizes = { overhead: number; input: number; output: number };

/** Estimated vsize of a payout: `inputs` inputs, the payee output, and a change output if `change`. An upper bound. */
export function payoutVsize(sizes: Sizes, inputs: number, payeeOutputSize: number, change: boolean): number {
  return sizes.overhead + inputs * sizes.input + payeeOutputSize + (change ? sizes.output : 0);
}

export type Coin = { key: string; amount: bigint };

export type Selection = { inputs: Coin[]; fee: bigint; change: bigint; vsize: number };

export class InsufficientFundsError extends Error {
  constructor(
    readonly available: bigint,
    readonly needed: bigint,
  ) {
    super(`insufficient funds: ${available} available, at least ${needed} needed`);
    this.name = 'InsufficientFundsError';
  }
}

/**
 * Largest-first accumulation until the inputs pay the amount and the fee; change only when it is
 * worth more than `dust`, otherwise the remainder goes to the fee. Deterministic: ties broken by key.
 */
export function selectCoins(args: {
  coins: Coin[];
  amount: bigint;
  satPerKvb: bigint;
  sizes: Sizes;
  payeeOutputSize: number;
  dust: bigint;
}): Selection {
  const { amount, satPerKvb, sizes, payeeOutputSize, dust } = args;
  const coins = [...args.coins].sort((a, b) => (a.amount === b.amount ? (a.key < b.key ? -1 : 1) : a.amount > b.amount ? -1 : 1));
  const chosen: Coin[] = [];
  let total = 0n;
  for (const coin of coins) {
    chosen.push(coin);
    total += coin.amount;
    const withChange = payoutVsize(sizes, chosen.length, payeeOutputSize, true);
    const feeWithChange = feeFor(withChange, satPerKvb);
    if (total - amount - feeWithChange > dust) {
      return { inputs: chosen, fee: feeWithChange, change: total - amount - feeWithChange, vsize: withChange };
    }
    const base = payoutVsize(sizes, chosen.length, payeeOutputSize, false);
    const feeWithout = feeFor(base, satPerKvb);
    if (total >= amount + feeWithout) return { inputs: chosen, fee: total - amount, change: 0n, vsize: base };
  }
  const needed = amount + feeFor(payoutVsize(sizes, Math.max(1, chosen.length), payeeOutputSize, false), satPerKvb);
  throw new InsufficientFundsError(total, needed);
}

/**
 * Which tracked outputs a payout may spend: credited deposits and Kassa's own change, in both cases
 * only while mined on the best chain (a credited output reorganised out waits until it is mined again).
 */
export function isSpendable(o: { branch: number; state: string; blockHeight: number | null; spentBy: string | null }): boolean {
  if (o.spentBy !== null || o.state === 'DROPPED' || o.blockHeight === null) return false;
  return o.branch === 0 ? o.state === 'CONFIRMED' : true;
}

/**
 * The fee of a replacement of a stuck payout (BIP-125): the same inputs and payee output, the
 * difference taken from the change. It pays the market rate over its size, and at least the old
 * fee plus the relay's incremental fee over its size (rules 3 and 4: a higher absolute fee, enough
 * to pay for its own relay). Null when the change, less that difference, would not stay above
 * `dust`: then the payout is left as it is (dropping the change would pay it all to the miners).
 */
export function replacementFee(args: {
  vsize: number;
  oldFee: bigint;
  change: bigint;
  marketSatPerKvb: bigint;
  incrementalSatPerKvb: bigint;
  dust: bigint;
}): { fee: bigint; change: bigint } | null {
  const atMarket = feeFor(args.vsize, args.marketSatPerKvb);
  const least = args.oldFee + feeFor(args.vsize, args.incrementalSatPerKvb);
  const fee = atMarket > least ? atMarket : least;
  const change = args.change - (fee - args.oldFee);
  return change > args.dust ? { fee, change } : null;
}
