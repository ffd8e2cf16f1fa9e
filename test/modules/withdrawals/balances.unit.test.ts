/** The balances answer from ledger rows (pure): every currency once, the settlement currency always, amounts exact. */
import { describe, expect, it } from 'vitest';
import { balancesView, IN_FLIGHT_STATUSES } from '../../../server/modules/withdrawals/balances.service.js';

describe('balancesView', () => {
  it('lists the settlement currency at zero when there is nothing', () => {
    expect(balancesView([], [], 'EUR')).toEqual({ balances: [{ currency: 'EUR', available: '0.00', pending: '0.00' }] });
  });

  it('merges ledger balances and in-flight sums per currency, sorted, in each currency’s format', () => {
    const view = balancesView(
      [{ currency: 'EUR', amount: '532.800000' }, { currency: 'USDT', amount: '80.500000' }],
      [{ currency: 'EUR', amount: '61.2' }, { currency: 'BTC', amount: '0.00102000' }],
      'EUR',
    );
    expect(view.balances).toEqual([
      { currency: 'BTC', available: '0', pending: '0.00102' },
      { currency: 'EUR', available: '532.80', pending: '61.20' },
      { currency: 'USDT', available: '80.5', pending: '0' },
    ]);
  });

  it('never rounds a ledger amount away: more decimals than the currency has are kept', () => {
    expect(balancesView([{ currency: 'EUR', amount: '10.005' }], [], 'EUR').balances[0]!.available).toBe('10.005');
  });

  it('pending counts exactly the withdrawal statuses that are not final', () => {
    expect([...IN_FLIGHT_STATUSES].sort()).toEqual(['PENDING_APPROVAL', 'PROCESSING']);
  });
});
