/**
 * First run: on an empty sandbox database, create a demo business with an
 * API key and tell the newcomer exactly how to make a first payment; outside
 * the sandbox, only say how to create a business.
 */
import { count } from 'drizzle-orm';
import { businesses } from '../../../db/schema.js';
import { createBusiness } from './business.service.js';
import type { BusinessesDeps as Deps } from './ports.js';

export type DemoCredentials = { businessId: string; apiKey: string; apiSecret: string; callbackSecret: string };

async function hasBusinesses(deps: Deps): Promise<boolean> {
  const [row] = await deps.database.db.select({ n: count() }).from(businesses);
  return (row?.n ?? 0) > 0;
}

export async function createDemoBusinessIfEmpty(deps: Deps): Promise<DemoCredentials | null> {
  if (await hasBusinesses(deps)) return null;
  const created = await createBusiness(deps.database.db, deps.masterKey, { name: 'Demo shop' });
  return { businessId: created.business.id, apiKey: created.apiKey, apiSecret: created.apiSecret, callbackSecret: created.callbackSecret };
}

export function demoBanner(creds: DemoCredentials, publicUrl: string): string {
  return [
    '',
    '  Kassa created a demo business (shown once; keep these):',
    '',
    `    businessId      ${creds.businessId}`,
    `    API key         ${creds.apiKey}`,
    `    API secret      ${creds.apiSecret}`,
    `    callback secret ${creds.callbackSecret}`,
    '',
    '  Make a first payment (in another terminal, from this folder):',
    '',
    `    KASSA_URL=${publicUrl} KASSA_BUSINESS_ID=${creds.businessId} KASSA_API_KEY=${creds.apiKey} KASSA_API_SECRET=${creds.apiSecret} npm run example:create-payment`,
    '',
    '  It prints a paymentUrl: open it in a browser.',
    '',
  ].join('\n');
}

/** Outside the sandbox nothing is created for the operator: on an empty database, say how to begin. */
export async function productionHint(deps: Deps): Promise<string | null> {
  if (await hasBusinesses(deps)) return null;
  return [
    '',
    '  No business yet. Create one (its API key and secrets are printed once):',
    '',
    "    npm run kassa -- business:create --name 'My shop'",
    '',
  ].join('\n');
}
