/** Businesses: create, list, change settings (CONTRACT §9). */
import { z } from 'zod';
import { createBusiness, listBusinesses, updateBusiness } from '../../modules/businesses/index.js';
import { BusinessNameSchema, UpdateBusinessSchema, businessView } from '../trpc/business-router.js';
import { command, optionalString, parseBoolean, requireString, requireUuid, UsageError, type Values } from './command.js';

const httpUrl = z.url({ protocol: /^https?$/ });

/** Each business:update flag and the setting it changes (the settings' checks are the internal API's schema). */
const UPDATE_FLAGS = {
  name: 'name',
  'settlement-currency': 'settlementCurrency',
  'withdrawal-callback-url': 'withdrawalCallbackUrl',
  'payment-callback-url': 'paymentCallbackUrl',
  'approval-policy': 'approvalPolicy',
  'require-whitelist': 'requireWhitelist',
  'service-fee-percent': 'serviceFeePercent',
  'user-fee-share': 'userFeeSharePercent',
  'review-threshold': 'riskReviewThreshold',
  'block-threshold': 'riskBlockThreshold',
  'overpayment-policy': 'overpaymentPolicy',
  'refund-follow-up-deposits': 'refundFollowUpDeposits',
  'default-fee-payer': 'defaultFeePayer',
  'allowed-networks': 'allowedNetworks',
} as const;
type Flag = keyof typeof UPDATE_FLAGS;
const FLAG_OF = Object.fromEntries(Object.entries(UPDATE_FLAGS).map(([flag, field]) => [field, flag])) as Record<string, Flag>;
const BOOLEAN_FLAGS: Flag[] = ['require-whitelist', 'refund-follow-up-deposits'];
const UPPERCASE_FLAGS: Flag[] = ['approval-policy', 'overpayment-policy', 'default-fee-payer', 'settlement-currency'];

/**
 * `--allowed-networks USDT=ETH,TRX` (repeatable, one currency each) → `{USDT: ['ETH','TRX']}`;
 * `--allowed-networks all` → `{}` (every network, the default).
 */
export function parseAllowedNetworks(items: readonly string[]): Record<string, string[]> {
  if (items.length === 1 && items[0]!.toLowerCase() === 'all') return {};
  const out: Record<string, string[]> = {};
  for (const item of items) {
    const match = /^([A-Za-z0-9]+)=([A-Za-z0-9]+(?:,[A-Za-z0-9]+)*)$/.exec(item.trim());
    if (!match) throw new UsageError(`--allowed-networks takes CURRENCY=NET[,NET...] (e.g. USDT=ETH,TRX) or all, not ${JSON.stringify(item)}.`);
    out[match[1]!.toUpperCase()] = match[2]!.split(',').map((n) => n.toUpperCase());
  }
  return out;
}

/** The flags given, as the settings object of UpdateBusinessSchema. */
function updateInput(values: Values): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [flag, field] of Object.entries(UPDATE_FLAGS) as [Flag, string][]) {
    const raw = values[flag];
    if (raw === undefined) continue;
    if (flag === 'allowed-networks') input[field] = parseAllowedNetworks(raw as string[]);
    else if (BOOLEAN_FLAGS.includes(flag)) input[field] = parseBoolean(raw as string, flag);
    else if (UPPERCASE_FLAGS.includes(flag)) input[field] = (raw as string).toUpperCase();
    // "none" removes a callback URL (no callbacks of that kind are sent).
    else if (field.endsWith('CallbackUrl') && raw === 'none') input[field] = null;
    else input[field] = raw;
  }
  return input;
}

function settingsLine(b: ReturnType<typeof businessView>): string {
  const networks = Object.entries(b.allowedNetworks).map(([c, n]) => `${c}=${n.join(',')}`).join(' ') || 'all';
  return [
    `settlement ${b.settlementCurrency}, fee ${b.serviceFeePercent}% (user share ${b.userFeeSharePercent}%), approvals ${b.approvalPolicy}, whitelist ${b.requireWhitelist ? 'required' : 'optional'}`,
    `risk review ≥ ${b.riskReviewThreshold}, block ≥ ${b.riskBlockThreshold}, networks ${networks}`,
    `payment callback ${b.paymentCallbackUrl ?? '-'}, withdrawal callback ${b.withdrawalCallbackUrl ?? '-'}`,
  ].join('\n    ');
}

export const businessCommands = [
  command('business:create --name <n> [--withdrawal-callback-url <u>] [--payment-callback-url <u>]', 'a new business with its callback secret and an API key holding every scope', async (ctx, values) => {
    const name = requireString(values, 'name', 'n');
    if (!BusinessNameSchema.safeParse(name).success) throw new UsageError('--name must be 1 to 200 characters, without control characters.');
    const urls = { withdrawalCallbackUrl: optionalString(values, 'withdrawal-callback-url'), paymentCallbackUrl: optionalString(values, 'payment-callback-url') };
    for (const [key, url] of Object.entries(urls)) {
      if (url !== undefined && !httpUrl.safeParse(url).success) throw new UsageError(`${key} must be an http(s) URL.`);
    }
    const created = await createBusiness(ctx.db, ctx.masterKey, { name, ...urls });
    const out = { businessId: created.business.id, apiKey: created.apiKey, apiSecret: created.apiSecret, callbackSecret: created.callbackSecret };
    return { json: out, human: Object.entries(out).map(([k, v]) => `${k.padEnd(15)} ${v}`).join('\n') };
  }),
  command('business:list', 'every business with its settings (never a secret)', async (ctx) => {
    const list = (await listBusinesses(ctx.db)).map(businessView);
    return {
      // `businessId` as CONTRACT §9 names it (and the API does); `id` stays for scripts written against it.
      json: { businesses: list.map((b) => ({ businessId: b.id, ...b })) },
      human: list.map((b) => `${b.id}  ${b.name}\n    ${settingsLine(b)}`).join('\n') || 'no businesses',
    };
  }),
  command(
    'business:update --business <id> [--withdrawal-callback-url u|none] [--payment-callback-url u|none] [--approval-policy none|one|two] [--require-whitelist true|false]\n' +
      '      [--service-fee-percent n] [--user-fee-share n] [--review-threshold s] [--block-threshold s] [--allowed-networks CUR=NET,NET|all]…\n' +
      '      [--name n] [--settlement-currency C] [--overpayment-policy process|excess_refund] [--refund-follow-up-deposits true|false] [--default-fee-payer business|recipient]',
    'change settings; prints the business as stored',
    async (ctx, values) => {
      const businessId = requireUuid(values, 'business');
      const settings = updateInput(values);
      if (Object.keys(settings).length === 0) throw new UsageError('business:update needs at least one setting to change.');
      const parsed = UpdateBusinessSchema.safeParse({ businessId, ...settings });
      if (!parsed.success) {
        throw new UsageError(parsed.error.issues.map((i) => `--${FLAG_OF[String(i.path[0])] ?? String(i.path[0])}: ${i.message}`).join('\n'));
      }
      const { businessId: _id, allowedNetworks, ...rest } = parsed.data;
      const next = { ...rest, ...(allowedNetworks ? { allowedNetworks: allowedNetworks as Record<string, string[]> } : {}) };
      const b = businessView(await updateBusiness(ctx.db, businessId, next));
      return { json: { businessId: b.id, ...b }, human: `${b.id}  ${b.name}\n    ${settingsLine(b)}` };
    },
    { options: { 'allowed-networks': { type: 'string', multiple: true } } },
  ),
];
