/**
 * Metadata for integrators (CONTRACT §4): currencies with their networks and
 * limits, exchange rates, and address validation (with its deprecated POST
 * twin of 2022-05-09).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { NetworkAccess } from '../../modules/networks/index.js';
import type { Deps } from '../../deps.js';
import { validationFailed } from '../../platform/errors.js';
import { requireApiKey } from './auth.js';
import { parseInput } from '../../platform/validate.js';
import { WITHDRAWAL_MAX, checkWithdrawalPair, withdrawalMin } from '../../modules/withdrawals/index.js';
import {
  CRYPTO_CURRENCIES, CRYPTO_DECIMALS, DEPOSIT_NETWORKS, FIAT_CURRENCIES, FIAT_DECIMALS, WITHDRAWAL_NETWORKS,
  isCrypto, isFiat, type Network,
} from '../../modules/money/index.js';
import { formatAnyAmount } from '../../modules/money/index.js';
import type { PricedCurrency } from '../../modules/money/index.js';

/** Pure: the currency metadata document, listing only the pairs `offered` (live: the configured networks). */
export function currencyMetadata(offered: (currency: string, network: Network) => boolean = () => true) {
  const crypto = CRYPTO_CURRENCIES.map((code) => {
    const withdraw = (WITHDRAWAL_NETWORKS[code] ?? []).filter((n) => offered(code, n));
    const networks = [...new Set([...DEPOSIT_NETWORKS[code].filter((n) => offered(code, n)), ...withdraw])].map((network) => {
      const withdrawable = withdraw.includes(network);
      return {
        network,
        deposit: DEPOSIT_NETWORKS[code].includes(network),
        withdraw: withdrawable,
        minAmount: withdrawable ? formatAnyAmount(withdrawalMin(code, network), code) : null,
        maxAmount: withdrawable ? WITHDRAWAL_MAX[code]![network]! : null,
      };
    });
    return { code, type: 'CRYPTO', decimals: CRYPTO_DECIMALS[code], deposit: networks.some((n) => n.deposit), withdraw: withdraw.length > 0, networks };
  }).filter((c) => c.networks.length > 0);
  const fiat = FIAT_CURRENCIES.map((code) => ({ code, type: 'FIAT', decimals: FIAT_DECIMALS[code], deposit: false, withdraw: false, networks: [] }));
  return { currencies: [...crypto, ...fiat] };
}

const codes = z
  .string()
  .max(400)
  .transform((s) => s.split(',').map((c) => c.trim().toUpperCase()).filter(Boolean));

export const RatesQuerySchema = z.object({ from: codes, to: codes });

const AddressParams = z.object({ currency: z.string().max(16), network: z.string().max(16), address: z.string().max(256) });

function validate(access: NetworkAccess, input: z.infer<typeof AddressParams>) {
  const pair = checkWithdrawalPair(input.currency.toUpperCase(), input.network.toUpperCase());
  if (!pair.ok) return { valid: false, reason: pair.message };
  // Live: the address format of the node's chain (rltc1… on a Litecoin regtest).
  const result = access.validateAddress(input.network.toUpperCase() as Network, input.address);
  return result.valid ? { valid: true } : { valid: false, reason: result.reason };
}

export function metadataRoutes(app: FastifyInstance, deps: Deps): void {
  const anyKey = { preHandler: requireApiKey(deps) };
  app.get('/v1/currencies', anyKey, async () =>
    currencyMetadata((currency, network) => deps.networks.enabled.includes(network) && deps.networks.offers(currency, network)),
  );

  app.get('/v1/rates', anyKey, async (request) => {
    const { from, to } = parseInput(RatesQuerySchema, request.query, 'query');
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
  });

  app.get<{ Params: { currency: string; network: string; address: string } }>(
    '/api/v1/currency/:currency/network/:network/address/:address/valid',
    anyKey,
    async (request) => validate(deps.networks, parseInput(AddressParams, request.params, 'path')),
  );

  app.post('/api/v1/addresses/validate', anyKey, async (request, reply) => {
    reply.header('deprecation', 'true').header('link', '</api/v1/currency/{currency}/network/{network}/address/{address}/valid>; rel="successor-version"');
    return validate(deps.networks, parseInput(AddressParams, request.body, 'address validation request'));
  });
}

