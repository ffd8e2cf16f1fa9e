/** The custom-elements manifest documents the public API and matches the component (run `npm run build:manifest` after changes). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
type Declaration = {
  tagName?: string;
  attributes?: { name: string }[];
  events?: { name: string }[];
  cssParts?: { name: string }[];
  cssProperties?: { name: string }[];
};
const manifest = JSON.parse(readFileSync(`${ROOT}widget/custom-elements.json`, 'utf8')) as { modules: { declarations?: Declaration[] }[] };
const element = manifest.modules.flatMap((m) => m.declarations ?? []).find((d) => d.tagName === 'crypto-checkout')!;

describe('custom-elements.json', () => {
  it('documents attributes, events, parts and custom properties of <crypto-checkout>', () => {
    expect(element.attributes!.map((a) => a.name)).toEqual(['payment-url', 'locale', 'full-page', 'redirect-delay']);
    expect(element.events!.map((e) => e.name)).toEqual(['checkout-status', 'checkout-complete']);
    expect(element.cssParts!.map((p) => p.name)).toEqual(expect.arrayContaining(['base', 'amount', 'qr', 'address', 'copy-button', 'status', 'back-button']));
    expect(element.cssProperties!.map((p) => p.name)).toEqual(
      expect.arrayContaining(['--kassa-color-primary', '--kassa-color-text', '--kassa-color-background', '--kassa-font-family', '--kassa-radius']),
    );
  });

  it('is up to date with the component', async () => {
    const analyzer = '@custom-elements-manifest/analyzer/cli.js';
    const { cli } = (await import(analyzer)) as { cli: (o: { argv: string[]; cwd: string; noWrite: boolean }) => Promise<unknown> };
    const fresh = await cli({ argv: ['analyze', '--config', 'widget/custom-elements-manifest.config.mjs', '--quiet'], cwd: ROOT, noWrite: true });
    expect(fresh).toEqual(manifest);
  });
});
