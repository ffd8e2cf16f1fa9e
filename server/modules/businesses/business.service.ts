/**
 * Businesses, their API keys and the operators who run Kassa. Secrets are
 * generated here, returned once, and stored encrypted (API and callback
 * secrets) or hashed (operator tokens).
 */
import { and, asc, desc, eq, isNull, sql } from 'drizzle-orm';
import { randomBytes } from 'node:crypto';
import type { Db, Queryable } from '../../../db/client.js';
import { apiKeys, businesses, operators, previousCallbackSecrets } from '../../../db/schema.js';
import { conflict, notFound, unprocessable } from '../../platform/errors.js';
import { Dec, SCOPES, type Scope } from '../money/index.js';
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

/** A Standard Webhooks secret: `whsec_` + base64 of 24 random bytes. */
function newCallbackSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** A new business with a callback secret and one API key holding every scope. */
export async function createBusiness(
  db: Db,
  masterKey: MasterKey,
  settings: BusinessSettings & { name: string },
): Promise<{ business: Business; callbackSecret: string } & CreatedApiKey> {
  const callbackSecret = newCallbackSecret();
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

/**
 * Change a business's settings. The risk thresholds are checked as they will stand (a change may give
 * one of them): a review threshold above the block threshold would turn review off without a word,
 * every score reaching it being blocked first; equal, review is off on purpose.
 */
export async function updateBusiness(db: Db, businessId: string, settings: BusinessSettings): Promise<Business> {
  return db.transaction(async (tx) => {
    const [current] = await tx.select().from(businesses).where(eq(businesses.id, businessId)).for('update');
    if (!current) throw notFound(`Business ${businessId} not found.`);
    const review = settings.riskReviewThreshold ?? current.riskReviewThreshold;
    const block = settings.riskBlockThreshold ?? current.riskBlockThreshold;
    if (new Dec(review).gt(block)) {
      throw unprocessable('RISK_THRESHOLDS_INVERTED', `The review threshold (${review}) is above the block threshold (${block}): no deposit would ever be reviewed. Set review at or below block.`, [
        { field: 'riskReviewThreshold', message: `must be at most the block threshold (${block})` },
      ]);
    }
    const [row] = await tx
      .update(businesses)
      .set({ ...settings, updatedAt: new Date() })
      .where(eq(businesses.id, businessId))
      .returning();
    return row!;
  });
}

/**
 * A new operator. Names are unique: the CLI names the deciding operator by it, and an audit trail of
 * two different "ann"s approving one withdrawal under policy TWO would read as one person twice.
 */
export async function createOperator(db: Db, name: string, role: OperatorRole): Promise<{ operatorId: string; token: string }> {
  const token = randomToken('kop_', 32);
  const [row] = (await db.execute(sql`
    insert into ${operators} (name, role, token_hash) select ${name}, ${role}, ${sha256Hex(token)}
    where not exists (select 1 from ${operators} where name = ${name}) returning id`)) as unknown as { id: string }[];
  if (!row) throw unprocessable('OPERATOR_NAME_TAKEN', `An operator named ${JSON.stringify(name)} exists already; choose another name.`);
  return { operatorId: row.id, token };
}

/** The operator holding this bearer token, unless revoked. */
export async function findOperatorByToken(db: Db, token: string) {
  return (await db.query.operators.findFirst({ where: and(eq(operators.tokenHash, sha256Hex(token)), isNull(operators.revokedAt)) })) ?? null;
}

export type OperatorView = { operatorId: string; name: string; role: string; createdAt: Date; revokedAt: Date | null };

const operatorView = { operatorId: operators.id, name: operators.name, role: operators.role, createdAt: operators.createdAt, revokedAt: operators.revokedAt };

/** Every operator, oldest first, never a token (only its hash is stored). */
export async function listOperators(db: Queryable): Promise<OperatorView[]> {
  return db.select(operatorView).from(operators).orderBy(asc(operators.createdAt), asc(operators.name));
}

/** Revoke an operator's token at once (a leaked one, someone who left); the row stays for the decisions it made. */
export async function revokeOperator(db: Queryable, name: string, at: Date): Promise<OperatorView> {
  const [row] = await db
    .update(operators)
    .set({ revokedAt: at })
    .where(and(eq(operators.name, name), isNull(operators.revokedAt)))
    .returning(operatorView);
  if (!row) throw notFound(`Active operator ${JSON.stringify(name)} not found.`);
  return row;
}

export async function listBusinesses(db: Queryable): Promise<Business[]> {
  return db.select().from(businesses).orderBy(asc(businesses.createdAt), asc(businesses.id));
}

export type ApiKeyView = { apiKeyId: string; apiKey: string; scopes: string[]; revokedAt: Date | null; createdAt: Date };

const apiKeyView = { apiKeyId: apiKeys.id, apiKey: apiKeys.key, scopes: apiKeys.scopes, revokedAt: apiKeys.revokedAt, createdAt: apiKeys.createdAt };

/** A business's keys, newest first, never their secrets. */
export async function listApiKeys(db: Queryable, businessId: string): Promise<ApiKeyView[]> {
  return db.select(apiKeyView).from(apiKeys).where(eq(apiKeys.businessId, businessId)).orderBy(desc(apiKeys.createdAt));
}

/** Revoke an active key by its public id (`kk_…`): refused from the next request on, as keys are not cached. */
export async function revokeApiKey(db: Queryable, apiKey: string, at: Date): Promise<ApiKeyView & { businessId: string }> {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(and(eq(apiKeys.key, apiKey), isNull(apiKeys.revokedAt)))
    .returning({ ...apiKeyView, businessId: apiKeys.businessId });
  if (!row) throw notFound(`Active API key ${apiKey} not found.`);
  return row;
}

/** The operator a CLI decision names, unless revoked. */
export async function findOperatorByName(db: Queryable, name: string) {
  return (await db.query.operators.findFirst({ where: and(eq(operators.name, name), isNull(operators.revokedAt)), orderBy: asc(operators.createdAt) })) ?? null;
}

/**
 * A new callback secret for a business. The one it replaces keeps signing
 * beside it (every attempt, retries too) until `overlapEndsAt`. A rotation
 * during an overlap is refused unless `replacePrevious` (only one earlier secret is kept).
 */
export async function rotateCallbackSecret(
  db: Db,
  masterKey: MasterKey,
  businessId: string,
  overlapEndsAt: Date,
  options: { now: Date; replacePrevious?: boolean },
): Promise<{ callbackSecret: string; previousSecretValidUntil: Date }> {
  const callbackSecret = newCallbackSecret();
  await db.transaction(async (tx) => {
    const [current] = await tx.select({ secretEnc: businesses.callbackSecretEnc }).from(businesses).where(eq(businesses.id, businessId)).for('update');
    if (!current) throw notFound(`Business ${businessId} not found.`);
    // One earlier secret signs beside the current one: rotating again while it still does would stop it
    // at once, before the time the first rotation promised its receivers.
    const [earlier] = await tx.select({ expiresAt: previousCallbackSecrets.expiresAt }).from(previousCallbackSecrets).where(eq(previousCallbackSecrets.businessId, businessId));
    if (earlier && earlier.expiresAt > options.now && !options.replacePrevious) {
      throw conflict(
        'OVERLAP_IN_PROGRESS',
        `The secret replaced by the last rotation still signs until ${earlier.expiresAt.toISOString()}; rotating now would stop it at once. Wait until then, or rotate with --replace-previous to end that overlap now.`,
      );
    }
    await tx
      .insert(previousCallbackSecrets)
      .values({ businessId, secretEnc: current.secretEnc, expiresAt: overlapEndsAt })
      .onConflictDoUpdate({ target: previousCallbackSecrets.businessId, set: { secretEnc: current.secretEnc, expiresAt: overlapEndsAt } });
    await tx.update(businesses).set({ callbackSecretEnc: encryptSecret(masterKey, callbackSecret), updatedAt: new Date() }).where(eq(businesses.id, businessId));
  });
  return { callbackSecret, previousSecretValidUntil: overlapEndsAt };
}
