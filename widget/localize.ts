/**
 * Languages of the checkout: which one to speak, where its strings come
 * from, and how `{placeholders}` are filled. English is bundled with the
 * widget; each other language is its own small chunk, fetched once when a
 * checkout first needs it (twelve languages inline would cost ~12 KB gzip,
 * half the widget's budget).
 */
// The spec's 12 languages (spec §2.2 `locale`): the server's own list, one source.
import { LANGUAGES, type Language } from '../server/modules/money/languages.rules.js';
import { en, type MessageKey, type Messages } from './locales/en.js';

export type { MessageKey, Messages };
export { LANGUAGES, type Language };

/** A supported language and the BCP 47 tag handed to `Intl` (it may carry a region: `pt-BR`). */
export type ResolvedLocale = { language: Language; locale: string };

const isLanguage = (s: string): s is Language => (LANGUAGES as readonly string[]).includes(s);

/**
 * Reads `en-US`, `en_US` or `en`; null when the language is not one of the 12.
 */
export function parseLocale(tag: string | null | undefined): ResolvedLocale | null {
  const parts = (tag ?? '').trim().replace(/_/g, '-').split('-');
  const language = parts[0]!.toLowerCase();
  if (!isLanguage(language)) return null;
  let locale: string = language;
  try {
    locale = Intl.getCanonicalLocales(parts.join('-'))[0] ?? language;
  } catch {
    // A malformed region or script: the language alone is still right.
  }
  return { language, locale };
}

/**
 * The language to speak: the element's `locale` attribute when set (an
 * unsupported one means English), else the payment's language from the view.
 */
export function resolveLocale(attribute: string | null | undefined, viewLanguage: string | null | undefined): ResolvedLocale {
  return parseLocale(attribute || viewLanguage) ?? { language: 'en', locale: 'en' };
}

export const direction = (language: Language): 'rtl' | 'ltr' => (language === 'ar' ? 'rtl' : 'ltr');

/** Fill `{name}` placeholders; an unknown placeholder stays visible rather than vanishing. */
export function translate(messages: Messages, key: MessageKey, params: Record<string, string | number> = {}): string {
  return messages[key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

const LOADERS: Record<Exclude<Language, 'en'>, () => Promise<Messages>> = {
  ar: () => import('./locales/ar.js').then((m) => m.ar),
  bg: () => import('./locales/bg.js').then((m) => m.bg),
  de: () => import('./locales/de.js').then((m) => m.de),
  es: () => import('./locales/es.js').then((m) => m.es),
  fr: () => import('./locales/fr.js').then((m) => m.fr),
  ja: () => import('./locales/ja.js').then((m) => m.ja),
  lt: () => import('./locales/lt.js').then((m) => m.lt),
  pt: () => import('./locales/pt.js').then((m) => m.pt),
  ru: () => import('./locales/ru.js').then((m) => m.ru),
  tr: () => import('./locales/tr.js').then((m) => m.tr),
  zh: () => import('./locales/zh.js').then((m) => m.zh),
};

const loaded = new Map<Language, Promise<Messages>>([['en', Promise.resolve(en)]]);

/** The strings of `language`, fetched once; English when the chunk cannot be loaded (and retried next time). */
export function loadMessages(language: Language): Promise<Messages> {
  let messages = loaded.get(language);
  if (!messages) {
    messages = LOADERS[language as Exclude<Language, 'en'>]().catch(() => {
      loaded.delete(language);
      return en;
    });
    loaded.set(language, messages);
  }
  return messages;
}

export { en };
