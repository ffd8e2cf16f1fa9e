/** The 12 languages: same keys, same placeholders, real translations; locale resolution; Intl formatting. */
import { describe, expect, it } from 'vitest';
import { formatCountdown, formatCrypto, formatDateTime, formatFiat, shorten } from '../../widget/format.js';
import { direction, en, LANGUAGES, loadMessages, parseLocale, resolveLocale, translate, type Messages } from '../../widget/localize.js';

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('locales', () => {
  it('has the 12 spec languages', () => {
    expect([...LANGUAGES].sort()).toEqual(['ar', 'bg', 'de', 'en', 'es', 'fr', 'ja', 'lt', 'pt', 'ru', 'tr', 'zh']);
  });

  it.each(LANGUAGES.filter((l) => l !== 'en'))('%s translates every English string with the same placeholders', async (language) => {
    const messages: Messages = await loadMessages(language);
    expect(messages).not.toBe(en);
    expect(Object.keys(messages).sort()).toEqual(Object.keys(en).sort());
    for (const key of Object.keys(en) as (keyof Messages)[]) {
      expect(messages[key].trim(), `${language}.${key}`).not.toBe('');
      expect(placeholders(messages[key]), `${language}.${key}`).toEqual(placeholders(en[key]));
    }
    // Real translations: most strings differ from English (brand-like terms such as "Destination tag" may not).
    const same = (Object.keys(en) as (keyof Messages)[]).filter((k) => messages[k] === en[k]);
    expect(same.length, `${language} untranslated: ${same.join(', ')}`).toBeLessThanOrEqual(4);
  });

  it('fills placeholders and leaves unknown ones visible', () => {
    expect(translate(en, 'redirect', { s: 5 })).toBe('Returning to the shop in 5 s…');
    expect(translate(en, 'underpaid', { paid: '1 BTC' })).toBe('Partly paid: 1 BTC received. Send the remaining {remaining}.');
  });
});

describe('resolveLocale', () => {
  it('reads en-US, en_US and en', () => {
    expect(parseLocale('en-US')).toEqual({ language: 'en', locale: 'en-US' });
    expect(parseLocale('pt_BR')).toEqual({ language: 'pt', locale: 'pt-BR' });
    expect(parseLocale('DE')).toEqual({ language: 'de', locale: 'de' });
    expect(parseLocale('zh-Hant-TW')).toEqual({ language: 'zh', locale: 'zh-Hant-TW' });
    expect(parseLocale('nl-NL')).toBeNull();
  });

  it('prefers the attribute, falls back to the view, then English', () => {
    expect(resolveLocale('fr-CA', 'de')).toEqual({ language: 'fr', locale: 'fr-CA' });
    expect(resolveLocale('', 'ja')).toEqual({ language: 'ja', locale: 'ja' });
    expect(resolveLocale('xx', 'ja')).toEqual({ language: 'en', locale: 'en' });
    expect(resolveLocale(null, undefined)).toEqual({ language: 'en', locale: 'en' });
  });

  it('writes Arabic right to left, the rest left to right', () => {
    expect(direction('ar')).toBe('rtl');
    expect(LANGUAGES.filter((l) => direction(l) === 'rtl')).toEqual(['ar']);
  });
});

describe('format', () => {
  it('formats fiat with the currency of the payment', () => {
    expect(formatFiat('en', '600.00', 'EUR')).toBe('€600.00');
    expect(formatFiat('de', '1234.5', 'EUR')).toBe('1.234,50\u00a0€');
    expect(formatFiat('ja', '600', 'JPY')).toBe('￥600');
  });

  it('keeps every decimal of a crypto amount', () => {
    expect(formatCrypto('en', '0.00012345', 'BTC')).toBe('0.00012345\u00a0BTC');
    expect(formatCrypto('fr', '1234.123456789012345678', 'ETH')).toBe('1\u202f234,123456789012345678\u00a0ETH');
    expect(formatCrypto('en', '650', 'USDT')).toBe('650\u00a0USDT');
  });

  it('counts down as a clock', () => {
    expect(formatCountdown('en', 1781)).toBe('29:41');
    expect(formatCountdown('en', 3909)).toBe('1:05:09');
    expect(formatCountdown('en', 7 * 86_400 - 1)).toBe('6d 23:59:59');
    expect(formatCountdown('en', -5)).toBe('00:00');
    expect(formatCountdown('ar-EG', 61)).toBe('٠١:٠١');
  });

  it('keeps formatters apart by locale and options, also past the 64 it keeps', () => {
    // The same locale with other decimals or another currency must not reuse a formatter built for the first.
    expect(formatCrypto('en', '1.5', 'BTC')).toBe('1.5\u00a0BTC');
    expect(formatCrypto('en', '1.50000000', 'BTC')).toBe('1.50000000\u00a0BTC');
    expect(formatFiat('en', '5', 'USD')).toBe('$5.00');
    expect(formatFiat('en', '5', 'EUR')).toBe('€5.00');
    // 4 locales × 20 decimals: 80 formatters, more than the cache holds.
    for (const [locale, point] of [['de', ','], ['en', '.'], ['fr', ','], ['ja', '.']] as const) {
      for (let decimals = 1; decimals <= 20; decimals++) {
        expect(formatCrypto(locale, `1.${'0'.repeat(decimals - 1)}1`, 'ETH')).toBe(`1${point}${'0'.repeat(decimals - 1)}1\u00a0ETH`);
      }
    }
    expect(formatCrypto('en', '1.5', 'BTC')).toBe('1.5\u00a0BTC');
    expect(formatFiat('xx-invalid-currency', '5', 'NOT A CURRENCY')).toBe('5 NOT A CURRENCY');
  });

  it('formats dates and shortens ids', () => {
    expect(formatDateTime('en', 1_768_478_400)).toMatch(/Jan 15, 2026/);
    // A date formatter is kept apart from the number formatters of the same locale.
    expect(formatCrypto('de', '1.5', 'ETH')).toBe('1,5\u00a0ETH');
    expect(formatDateTime('de', 1_768_478_400)).toMatch(/15\.01\.2026/);
    expect(shorten('0123456789abcdef0123')).toBe('012345…ef0123');
    expect(shorten('short')).toBe('short');
  });
});
