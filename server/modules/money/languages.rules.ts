/**
 * The languages the checkout speaks (spec §2.2 `locale`): one list for the
 * API's validation and the widget, which may import pure `*.rules.ts` files
 * (.dependency-cruiser.cjs), so this file imports nothing.
 */
export const LANGUAGES = ['ar', 'bg', 'zh', 'en', 'fr', 'de', 'ja', 'lt', 'pt', 'ru', 'es', 'tr'] as const;
export type Language = (typeof LANGUAGES)[number];
