/**
 * The minimum deposit amounts (CONTRACT §4 `minAmount`) as data: one for
 * every deposit pair and none elsewhere, each at least five times the
 * network fee of a refund, above the chain's own floor (dust, reserve, rent),
 * and written with no more decimals than the currency has.
 */
import { describe, expect, it } from 'vitest';
import {
  CRYPTO_CURRENCIES, CRYPTO_DECIMALS, DEPOSIT_MIN_AMOUNTS, DEPOSIT_NETWORKS, Dec, NATIVE_FLOORS, NETWORK_FEES, NETWORKS, depositMinimum,
} from '../../../server/modules/money/index.js';

const pairs = CRYPTO_CURRENCIES.flatMap((currency) => DEPOSIT_NETWORKS[currency].map((network) => ({ currency, network })));

describe('DEPOSIT_MIN_AMOUNTS', () => {
  it('has exactly the 18 deposit pairs', () => {
    expect(pairs).toHaveLength(18);
    for (const currency of CRYPTO_CURRENCIES) {
      for (const network of NETWORKS) {
        const deposit = DEPOSIT_NETWORKS[currency].includes(network);
        expect(depositMinimum(currency, network) !== null, `${currency}/${network}`).toBe(deposit);
      }
    }
  });

  it.each(pairs)('$currency on $network: ≥ 5 × the refund fee, within the currency’s decimals', ({ currency, network }) => {
    const min = new Dec(DEPOSIT_MIN_AMOUNTS[currency][network]!);
    const fee = new Dec(NETWORK_FEES[currency][network]!);
    expect(min.gte(fee.mul(5)), `${min} vs fee ${fee}`).toBe(true);
    expect(min.decimalPlaces()).toBeLessThanOrEqual(CRYPTO_DECIMALS[currency]);
  });

  it.each(Object.entries(NATIVE_FLOORS))('%s on its own chain: above the floor %s', (currency, floor) => {
    const min = new Dec(DEPOSIT_MIN_AMOUNTS[currency as 'BTC'][currency as 'BTC']!);
    expect(min.gt(floor!)).toBe(true);
  });
});
