/** The checkout's I/O: find a payment by its token, build its view, let the customer choose a currency. */
import { eq } from 'drizzle-orm';
import { payments } from '../../../db/schema.js';
import { getBusiness, type Business } from '../businesses/index.js';
import type { PaymentsDeps as Deps } from './ports.js';
import { notFound } from '../../platform/errors.js';
import { CRYPTO_CURRENCIES, DEPOSIT_NETWORKS, type FiatCurrency } from '../money/index.js';
import { Dec, formatAmount } from '../money/index.js';
import { priceInCrypto } from './pricing.js';
import type { PaymentRow } from './payment-record.rules.js';
import { businessAllows, chooseCurrency, paymentRecord } from './payment.service.js';
import { toCheckoutView, type CheckoutOption, type CheckoutView } from './checkout-view.rules.js';

export const TOKEN_RE = /^[A-Za-z0-9_-]{22}$/;

/** The payment of a checkout token; undefined for an unknown or malformed token. */
export async function findPaymentByToken(deps: Deps, token: string): Promise<PaymentRow | undefined> {
  return TOKEN_RE.test(token) ? deps.database.db.query.payments.findFirst({ where: eq(payments.checkoutToken, token) }) : undefined;
}

export async function paymentByToken(deps: Deps, token: string): Promise<PaymentRow> {
  const row = await findPaymentByToken(deps, token);
  if (!row) throw notFound('No checkout with this token.');
  return row;
}

/** For a NEW payment: every currency/network pair the business accepts, priced now. */
async function options(deps: Deps, row: PaymentRow, business: Business): Promise<CheckoutOption[]> {
  if (row.status !== 'NEW' || !row.displayCurrency || !row.expectedDisplayAmount) return [];
  const now = deps.now();
  const fiat = { currency: row.displayCurrency as FiatCurrency, amount: new Dec(row.expectedDisplayAmount), fee: new Dec(row.expectedDisplayFee ?? 0) };
  const out: CheckoutOption[] = [];
  for (const currency of CRYPTO_CURRENCIES) {
    for (const network of DEPOSIT_NETWORKS[currency]) {
      if (!businessAllows(business, currency, network) || !deps.networks.enabled.includes(network) || !deps.networks.offers(currency, network)) continue;
      const price = await priceInCrypto(deps.rates, fiat, currency, now);
      out.push({ currency, network, amount: formatAmount(price.expectedDepositAmount, currency, 'UP') });
    }
  }
  return out;
}

export async function checkoutView(deps: Deps, row: PaymentRow): Promise<CheckoutView> {
  const [record, business] = await Promise.all([paymentRecord(deps.database.db, row, deps.config.publicUrl), getBusiness(deps.database.db, row.businessId)]);
  return toCheckoutView(record, await options(deps, row, business), {
    merchantName: business.name,
    testMode: deps.config.sandbox,
    paymentUri: (network, p) => deps.networks.paymentUri(network, p),
    now: deps.now(),
  });
}

export async function chooseByToken(deps: Deps, token: string, choice: { depositCurrency: string; network: string }): Promise<CheckoutView> {
  const row = await paymentByToken(deps, token);
  return checkoutView(deps, await chooseCurrency(deps, row.id, choice));
}
