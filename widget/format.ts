/**
 * Numbers, money and time for people, through `Intl`. Amounts arrive as
 * exact decimal strings and are formatted as strings, so no digit of a
 * crypto amount is lost to floating point. Pure: no DOM.
 */

/**
 * One formatter per kind, locale and options: building an `Intl` formatter costs ~20 µs, using a built
 * one ~2, and a page formats every amount and date on each render, which the countdown asks for every
 * second. At most 64 are kept (the server renders the first view for any payment's locale), then they
 * are built anew.
 */
const formatters = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();
function kept<F extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, build: () => F): F {
  let formatter = formatters.get(key) as F | undefined;
  if (!formatter) {
    if (formatters.size >= 64) formatters.clear();
    formatters.set(key, (formatter = build()));
  }
  return formatter;
}
const numberFormat = (locale: string, options?: Intl.NumberFormatOptions) =>
  kept(`number ${locale} ${JSON.stringify(options)}`, () => new Intl.NumberFormat(locale, options));

/** A fiat amount with its currency sign: `€600.00`, `600,00 €`. */
export function formatFiat(locale: string, amount: string, currency: string): string {
  try {
    return numberFormat(locale, { style: 'currency', currency }).format(amount as Intl.StringNumericLiteral);
  } catch {
    return `${amount} ${currency}`;
  }
}

/** A crypto amount with exactly the decimals the server gave, then the code: `0.01 BTC`, `0,01 BTC`. */
export function formatCrypto(locale: string, amount: string, code: string): string {
  const decimals = Math.min(100, (amount.split('.')[1] ?? '').length);
  let number = amount;
  try {
    number = numberFormat(locale, { minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(amount as Intl.StringNumericLiteral);
  } catch {
    // Keep the server's own notation.
  }
  return `${number}\u00a0${code}`;
}

/** Time left as a clock: `29:41`, `1:05:09`, or with days `6d 23:59:59` (the unit localised). */
export function formatCountdown(locale: string, seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const two = numberFormat(locale, { minimumIntegerDigits: 2 });
  const days = Math.floor(s / 86_400);
  const hours = Math.floor((s % 86_400) / 3600);
  const clock = `${two.format(Math.floor((s % 3600) / 60))}:${two.format(s % 60)}`;
  if (days) {
    const day = numberFormat(locale, { style: 'unit', unit: 'day', unitDisplay: 'narrow' }).format(days);
    return `${day} ${two.format(hours)}:${clock}`;
  }
  return hours ? `${numberFormat(locale).format(hours)}:${clock}` : clock;
}

/** A moment (UNIX seconds) as a short local date and time. */
export function formatDateTime(locale: string, unixSeconds: number): string {
  return kept(`date ${locale}`, () => new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' })).format(unixSeconds * 1000);
}

/** A long identifier (transaction hash) shortened in the middle for display: `3f5a9c…e81b`. */
export const shorten = (id: string, keep = 6): string => (id.length > keep * 2 + 1 ? `${id.slice(0, keep)}…${id.slice(-keep)}` : id);

/** The exact sum of non-negative decimal strings (`0.1` + `0.2` = `0.3`), through BigInt: never a float. */
export function sumDecimals(amounts: readonly string[]): string {
  const scale = Math.max(0, ...amounts.map((a) => (a.split('.')[1] ?? '').length));
  const total = amounts.reduce((sum, a) => {
    const [whole = '0', fraction = ''] = a.split('.');
    return sum + BigInt(whole + fraction.padEnd(scale, '0'));
  }, 0n);
  const digits = total.toString().padStart(scale + 1, '0');
  return scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
}
