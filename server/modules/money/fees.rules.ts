/**
 * The fee formulas of CONTRACT §5, pure and exact. F is the business's
 * service fee percentage, U the percentage of that fee the end user covers
 * (`userServiceFeeDistributionPercentage`).
 */
import { Dec } from './decimal.js';

export type FeeSettings = { serviceFeePercent: Dec | string; userFeeSharePercent: Dec | string };

/** The user's share of the fee on a requested amount, added on top of it at creation. */
export function userFeeOnTop(requested: Dec, fees: FeeSettings): Dec {
  return requested.mul(fees.serviceFeePercent).div(100).mul(fees.userFeeSharePercent).div(100);
}

export type DepositFees = {
  /** The amount the fees are computed on: what the merchant asked for. */
  base: Dec;
  serviceFee: Dec;
  distributedUserServiceFee: Dec;
  payable: Dec;
};

/**
 * Split the value of a deposit (in any one currency) into fee and payable:
 * base = amount / (1 + F·U/10000); serviceFee = base·F/100;
 * distributed = base·F/100·U/100; payable = amount − serviceFee.
 * Unrounded: the caller rounds each figure once, in its currency.
 */
export function splitDeposit(amount: Dec, fees: FeeSettings): DepositFees {
  const f = new Dec(fees.serviceFeePercent);
  const u = new Dec(fees.userFeeSharePercent);
  const base = amount.div(new Dec(1).add(f.mul(u).div(10000)));
  const serviceFee = base.mul(f).div(100);
  const distributedUserServiceFee = serviceFee.mul(u).div(100);
  return { base, serviceFee, distributedUserServiceFee, payable: amount.sub(serviceFee) };
}
