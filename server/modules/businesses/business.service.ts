/**
 * Businesses, their API keys and the operators who run Kassa. Secrets are
 * generated here, returned once, and stored encrypted (API and callback
 * secrets) or hashed (operator tokens).
 */
import { eq } from 'drizzle-orm';
import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../../../db/client.js';
import { apiKeys, businesses, operators } from '../../../db/schema.js';
import { notFound } from '../../platform/errors.js';
import { SCOPES, type Scope } from '../money/index.js';
import { encryptSecret, randomToken, sha256Hex, type MasterKey } from '../../platform/secrets.js';

export type Business = typeof businesses.$inferSelect;
export type OperatorRole = 'admin' | 'viewer';

export type BusinessSettings = Partial<
  Pick<
    typeof businesses.$inferInsert,
    | 'name' | 'settlementCurrency' | 'serviceFeePercent' | 'userFeeSharePercent' | 'overpaymentPolicy'
    | 'refundFollowUpDeposits' | 'allowedNetworks' | 'withdrawalCallbackUrl' | 'paymentCallbackUrl'
    | 'riskReviewThreshold' | 'riskBlockThreshold' | 'approvalPolicy' | 'requireWhitelist' | 'defaultFeePayer'
  >
>;

export type CreatedApiKey = { apiKeyId: string; apiKey: string; apiSecret: string; scopes: Scope[] };

export async function createApiKey(db: Queryable, masterKey: MasterKey, businessId: string, scopes: readonly Scope[]): Promise<CreatedApiKey> {
  const apiKey = randomToken('kk_', 18);
  const apiSecret = randomToken('ks_', 32);
  const [row] = await db
    .insert(apiKeys)
    .values({ businessId, key: apiKey, secretEnc: encryptSecret(masterKey, apiSecret), scopes: [...scopes] })
    .returning({ id: apiKeys.id });
  return { apiKeyId: row!.id, apiKey, apiSecret, scopes: [...scopes] };
}

/** A new business with a callback secret and one API key holding every scope. */
export async function createBusiness(
  db: Db,
  masterKey: MasterKey,
  settings: BusinessSettings & { name: string },
): Promise<{ business: Business; callbackSecret: string } & CreatedApiKey> {
  const callbackSecret = `whsec_${randomBytes(24).toString('base64')}`;
  return db.transaction(async (tx) => {
    const [business] = await tx
      .insert(businesses)
      .values({ ...settings, callbackSecretEnc: encryptSecret(masterKey, callbackSecret) })
      .returning();
    const key = await createApiKey(tx, masterKey, business!.id, SCOPES);
    return { business: business!, callbackSecret, ...key };
  });
}

export async function getBusiness(db: Queryable, businessId: string): Promise<Business> {
  const row = await db.query.businesses.findFirst({ where: eq(businesses.id, businessId) });
  if (!row) throw notFound(`Business ${businessId} not found.`);
  return row;
}

export async function updateBusiness(db: Db, businessId: string, settings: BusinessSettings): Promise<Business> {
  const [row] = await db
    .update(businesses)
    .set({ ...settings, updatedAt: new Date() })
    .where(eq(businesses.id, businessId))
    .returning();
  if (!row) throw notFound(`Business ${businessId} not found.`);
  return row;
}

export async function createOperator(db: Db, name: string, role: OperatorRole): Promise<{ operatorId: string; token: string }> {
  const token = randomToken('kop_', 32);
  const [row] = await db.insert(operators).values({ name, role, tokenHash: sha256Hex(token) }).returning({ id: operators.id });
  return { operatorId: row!.id, token };
}

export async function findOperatorByToken(db: Db, token: string) {
  return (await db.query.operators.findFirst({ where: eq(operators.tokenHash, sha256Hex(token)) })) ?? null;
}
