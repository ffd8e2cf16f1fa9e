/**
 * Withdrawal rules as data (spec §8, §9; CONTRACT §6): statuses and their
 * transitions, the maximum per currency/network pair, approval policies.
 */
import { NETWORK_FEES, WITHDRAWAL_MAX_AMOUNTS, WITHDRAWAL_NETWORKS, type CryptoCurrency, type Network } from '../money/index.js';
import { Dec } from '../money/index.js';
import { assertOffered, validateDestinationTag, type NetworkAccess } from '../networks/index.js';
import { unprocessable } from '../../platform/errors.js';
import { defineStateMachine } from '../../platform/state-machine.js';

export const WITHDRAWAL_STATUSES = ['PENDING_APPROVAL', 'PROCESSING', 'COMPLETED', 'FAILED', 'BLOCKED', 'REJECTED'] as const;
export type WithdrawalStatus = (typeof WITHDRAWAL_STATUSES)[number];

export const WITHDRAWAL_MACHINE = defineStateMachine({
  name: 'Withdrawal',
  states: WITHDRAWAL_STATUSES,
  initial: ['PENDING_APPROVAL', 'PROCESSING'],
  transitions: {
    PENDING_APPROVAL: ['PROCESSING', 'REJECTED', 'FAILED', 'BLOCKED', 'COMPLETED'],
    PROCESSING: ['COMPLETED', 'FAILED', 'BLOCKED'],
    COMPLETED: [],
    FAILED: [],
    BLOCKED: [],
    REJECTED: [],
  },
});

/** Outcomes that return the debited amount to the merchant's balance. */
export const REFUNDING_OUTCOMES: readonly WithdrawalStatus[] = ['FAILED', 'BLOCKED', 'REJECTED'];

/** The status a callback reports for a final withdrawal: REJECTED ends as a FAILED callback. */
export const CALLBACK_STATUS: Partial<Record<WithdrawalStatus, 'COMPLETED' | 'FAILED' | 'BLOCKED'>> = {
  COMPLETED: 'COMPLETED',
  FAILED: 'FAILED',
  BLOCKED: 'BLOCKED',
  REJECTED: 'FAILED',
};

export const APPROVAL_POLICIES = { NONE: 0, ONE: 1, TWO: 2 } as const;
export type ApprovalPolicy = keyof typeof APPROVAL_POLICIES;

export const FEE_PAYERS = ['BUSINESS', 'RECIPIENT'] as const;
export type FeePayer = (typeof FEE_PAYERS)[number];

/** Largest single withdrawal per currency and network: each network family states it (money's WITHDRAWAL_MAX_AMOUNTS). */
export const WITHDRAWAL_MAX: Record<string, Partial<Record<Network, string>>> = WITHDRAWAL_MAX_AMOUNTS;

/** Smallest withdrawal: twice the network fee, so a recipient-paid fee never eats most of it. */
export function withdrawalMin(currency: CryptoCurrency, network: Network): Dec {
  return new Dec(NETWORK_FEES[currency][network] ?? '0').mul(2);
}

export type PairCheck = { ok: true } | { ok: false; code: 'CURRENCY_NOT_SUPPORTED' | 'NETWORK_NOT_SUPPORTED'; message: string };

export function checkWithdrawalPair(currency: string, network: string): PairCheck {
  const networks = WITHDRAWAL_NETWORKS[currency as CryptoCurrency];
  if (!networks) {
    return { ok: false, code: 'CURRENCY_NOT_SUPPORTED', message: `${currency} is not a payout currency; payout currencies: ${Object.keys(WITHDRAWAL_NETWORKS).join(', ')}` };
  }
  if (network === 'MAIN') return { ok: false, code: 'NETWORK_NOT_SUPPORTED', message: 'network MAIN is no longer valid since 2022-08-21; name the network' };
  if (!networks.includes(network as Network)) {
    return { ok: false, code: 'NETWORK_NOT_SUPPORTED', message: `${currency} is withdrawn on ${networks.join(', ')}, not ${network}` };
  }
  return { ok: true };
}

/**
 * Where funds may go: a withdrawal pair, a valid address for the network,
 * a valid tag. Throws the 422 of the first broken rule, naming the field
 * (`currencyField` is the request's name for the currency). Shared by
 * withdrawals and the whitelist.
 */
export function assertDestination(
  d: { currency: string; network: string; address: string; destinationTag?: string },
  currencyField: string,
  access: NetworkAccess,
): void {
  const pair = checkWithdrawalPair(d.currency, d.network);
  if (!pair.ok) throw rule(pair.code, pair.message, pair.code === 'CURRENCY_NOT_SUPPORTED' ? currencyField : 'network');
  assertOffered(access, d.currency, d.network);
  const address = access.validateAddress(d.network as Network, d.address);
  if (!address.valid) throw rule('INVALID_ADDRESS', `Not a valid ${d.network} address: ${address.reason}`, 'address');
  if (d.destinationTag !== undefined) {
    const tag = validateDestinationTag(d.network as Network, d.destinationTag);
    if (!tag.valid) throw rule('INVALID_DESTINATION_TAG', tag.reason, 'destinationTag');
  }
}

/** A 422 whose one field error repeats the detail. */
export const rule = (code: string, message: string, field: string) => unprocessable(code, message, [{ field, message }]);
