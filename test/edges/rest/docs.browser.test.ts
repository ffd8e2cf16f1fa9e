/**
 * /docs in real Chromium (playwright-core): Swagger UI, served by Kassa itself
 * under its Content-Security-Policy, renders the generated OpenAPI document
 * with every operation, the deprecated POST, both webhooks and the guide, with
 * no request to another origin and no script or CSP error.
 *
 * Needs /usr/bin/chromium; without it the file is skipped with a message,
 * unless KASSA_REQUIRE_BROWSER=1 makes that a failure.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../db/embedded.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

const CHROMIUM = '/usr/bin/chromium';
const MODE = existsSync(CHROMIUM) ? 'run' : process.env.KASSA_REQUIRE_BROWSER === '1' ? 'fail' : 'skip';
if (MODE === 'skip') console.warn(`[docs.browser] skipped: ${CHROMIUM} not found; KASSA_REQUIRE_BROWSER=1 turns this into a failure`);

let t: TestApp;
let browser: Browser;
let base: string;

describe.skipIf(MODE === 'skip')('GET /docs in Chromium', () => {
  beforeAll(async () => {
    if (MODE === 'fail') throw new Error(`${CHROMIUM} is required (KASSA_REQUIRE_BROWSER=1)`);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await startTestApp({ env: { PUBLIC_URL: base } });
    await t.app.listen({ port, host: '127.0.0.1' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders every operation, the deprecated POST, both webhooks and the guide, all from this origin', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    const foreign: string[] = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    const res = await page.goto(`${base}/docs`);
    expect(res?.status()).toBe(200);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0);
    expect(await page.locator('.opblock').count()).toBeGreaterThanOrEqual(operations);
    expect(await page.locator('.opblock-deprecated').count()).toBe(1);
    const text = await page.locator('#swagger-ui').innerText();
    expect(text).toContain('Kassa API');
    expect(text).toContain('When authentication fails');
    expect(text).toContain('/v1/balances');
    expect(text).toMatch(/Webhooks/i);
    expect(text).toContain('withdrawalCallback');
    expect(text).toContain('paymentCallback');
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
