/**
 * The smallest payment (CONTRACT §4 `minAmount`): a crypto-priced payment's
 * requested amount, or a fiat payment's amount due once its currency is
 * chosen, below the catalog's minimum for the pair is refused with 422
 * AMOUNT_BELOW_MINIMUM, because a refund of it would be eaten by the network fee.
 */
import { unprocessable } from '../../platform/errors.js';
import { Dec, depositMinimum, type CryptoCurrency, type Network } from '../money/index.js';

export function assertAboveMinimum(currency: CryptoCurrency, network: Network, amount: Dec, field: string): void {
  const min = depositMinimum(currency, network);
  if (min !== null && amount.lt(min)) {
    const message = `${amount.toFixed()} ${currency} is below the minimum of ${min} ${currency} on ${network} (see minAmount in GET /v1/currencies)`;
    throw unprocessable('AMOUNT_BELOW_MINIMUM', `The payment amount is below the minimum for ${currency} on ${network}.`, [{ field, message }]);
  }
}
