/**
 * Metadata for integrators (CONTRACT §4), as route-table entries: currencies
 * with their networks and limits, exchange rates, and address validation
 * (with its deprecated POST twin of 2022-05-09).
 */
import type { NetworkAccess } from '../../modules/networks/index.js';
import {
  AddressValidationBodySchema, AddressValidationParamsSchema, AddressValidationResultSchema,
} from '../../modules/networks/index.js';
import type { Deps } from '../../deps.js';
import { validationFailed } from '../../platform/errors.js';
import { WITHDRAWAL_MAX, checkWithdrawalPair, withdrawalMin } from '../../modules/withdrawals/index.js';
import {
  CRYPTO_CURRENCIES, CRYPTO_DECIMALS, CurrencyMetadataSchema, DEPOSIT_NETWORKS, FIAT_CURRENCIES, FIAT_DECIMALS, RatesQuerySchema,
  RatesResponseSchema, WITHDRAWAL_NETWORKS, depositMinimum, formatAnyAmount, isCrypto, isFiat, type Network, type PricedCurrency,
} from '../../modules/money/index.js';
import { SHARED_ERRORS, defineRoute, type AnyRoute } from './route.js';

/** Pure: the currency metadata document (the catalog's pairs and limits), listing only the pairs `offered` (live: the configured networks). */
export function currencyMetadata(offered: (currency: string, network: Network) => boolean = () => true) {
  const crypto = CRYPTO_CURRENCIES.map((code) => {
    const withdraw = (WITHDRAWAL_NETWORKS[code] ?? []).filter((n) => offered(code, n));
    const networks = [...new Set([...DEPOSIT_NETWORKS[code].filter((n) => offered(code, n)), ...withdraw])].map((network) => {
      const withdrawable = withdraw.includes(network);
      return {
        network,
        deposit: DEPOSIT_NETWORKS[code].includes(network),
        withdraw: withdrawable,
        minAmount: depositMinimum(code, network),
        minWithdrawalAmount: withdrawable ? formatAnyAmount(withdrawalMin(code, network), code) : null,
        maxAmount: withdrawable ? WITHDRAWAL_MAX[code]![network]! : null,
      };
    });
    return { code, type: 'CRYPTO' as const, decimals: CRYPTO_DECIMALS[code], deposit: networks.some((n) => n.deposit), withdraw: withdraw.length > 0, networks };
  }).filter((c) => c.networks.length > 0);
  const fiat = FIAT_CURRENCIES.map((code) => ({ code, type: 'FIAT' as const, decimals: FIAT_DECIMALS[code], deposit: false, withdraw: false, networks: [] }));
  return { currencies: [...crypto, ...fiat] };
}

function validate(access: NetworkAccess, input: { currency: string; network: string; address: string }) {
  const pair = checkWithdrawalPair(input.currency.toUpperCase(), input.network.toUpperCase());
  if (!pair.ok) return { valid: false, reason: pair.message };
  // Live: the address format of the node's chain (rltc1… on a Litecoin regtest).
  const result = access.validateAddress(input.network.toUpperCase() as Network, input.address);
  return result.valid ? { valid: true } : { valid: false, reason: result.reason };
}

const GET_VALIDATION_PATH = '/api/v1/currency/:currency/network/:network/address/:address/valid';

export function metadataRoutes(deps: Deps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/currencies',
      operationId: 'currency-metadata',
      tag: 'Metadata',
      summary: 'Currencies, networks and limits',
      description:
        'Per crypto currency its networks: `deposit`/`withdraw` flags, `minAmount` (smallest payment; below it 422 AMOUNT_BELOW_MINIMUM), ' +
        '`minWithdrawalAmount` and `maxAmount` (withdrawal limits). Fiat currencies are display currencies (ISO 4217 minor units).',
      auth: 'ANY_KEY',
      response: CurrencyMetadataSchema,
      handler: async () =>
        currencyMetadata((currency, network) => deps.networks.enabled.includes(network) && deps.networks.offers(currency, network)),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/rates',
      operationId: 'exchange-rates',
      tag: 'Metadata',
      summary: 'Exchange rates between any fiat and crypto codes',
      description: '`from` and `to` are comma-separated codes (1–60 each): `GET /v1/rates?from=BTC,ETH&to=EUR,USD`.',
      auth: 'ANY_KEY',
      query: RatesQuerySchema,
      response: RatesResponseSchema,
      errors: [SHARED_ERRORS.ratesUnavailable],
      handler: async ({ query }) => {
        const { from, to } = query;
        const known = (c: string) => isFiat(c) || isCrypto(c);
        const unknown = [...from, ...to].filter((c) => !known(c));
        if (from.length === 0 || to.length === 0 || unknown.length || from.length > 60 || to.length > 60) {
          throw validationFailed([
            { field: unknown.length ? 'from' : 'to', message: unknown.length ? `unknown currency: ${unknown.join(', ')}` : 'give 1–60 comma-separated codes in from and to' },
          ]);
        }
        const at = deps.now();
        const rates: Record<string, Record<string, string>> = {};
        for (const f of from) {
          rates[f] = {};
          for (const t of to) {
            const rate = await deps.rates.rate(f as PricedCurrency, t as PricedCurrency, at);
            rates[f]![t] = rate.toSignificantDigits(12).toFixed();
          }
        }
        // Live: where the rates come from and how old each source's newest quote is.
        const sources = deps.live
          ? (await deps.live.rates()).sources.map((s) => ({ name: s.name, ageS: s.ageS, fresh: s.fresh, lastError: s.lastError }))
          : [{ name: 'sandbox', ageS: 0, fresh: true, lastError: null }];
        return { rates, at: Math.floor(at.getTime() / 1000), sources };
      },
    }),
    defineRoute({
      method: 'GET',
      path: GET_VALIDATION_PATH,
      operationId: 'validate-address',
      tag: 'Metadata',
      summary: 'Validate a withdrawal address',
      description: 'Format and checksum rules of the network (base58check, bech32/bech32m, EIP-55, TRON, XRP and XLM encodings).',
      auth: 'ANY_KEY',
      params: AddressValidationParamsSchema,
      response: AddressValidationResultSchema,
      example: { response: { valid: false, reason: 'bad checksum' } },
      handler: async ({ params }) => validate(deps.networks, params),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/v1/addresses/validate',
      operationId: 'validate-address-deprecated',
      tag: 'Metadata',
      summary: 'Validate an address (deprecated)',
      description:
        'Deprecated on 2022-05-09 in favour of `GET /api/v1/currency/{currency}/network/{network}/address/{address}/valid`; ' +
        'same answer, with `Deprecation: true` and a `Link` to the successor.',
      deprecated: true,
      auth: 'ANY_KEY',
      body: AddressValidationBodySchema,
      response: AddressValidationResultSchema,
      responseHeaders: { Deprecation: 'Always `true`', Link: 'The successor operation, rel="successor-version"' },
      example: { request: { currency: 'USDT', network: 'TRX', address: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL' }, response: { valid: true } },
      handler: async ({ body, reply }) => {
        reply.header('deprecation', 'true').header('link', '</api/v1/currency/{currency}/network/{network}/address/{address}/valid>; rel="successor-version"');
        return validate(deps.networks, body);
      },
    }),
  ];
}
