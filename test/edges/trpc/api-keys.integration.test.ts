import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperator } from '../../../server/modules/businesses/business.service.js';
import { appRouter } from '../../../server/edges/trpc/app-router.js';
import { createContextInner } from '../../../server/edges/trpc/context.js';
import { createCallerFactory } from '../../../server/edges/trpc/init.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

const caller = async (role: 'admin' | 'viewer') => {
  const op = await createOperator(t.db.db, `op-${role}`, role);
  return createCallerFactory(appRouter)(createContextInner({ deps: t.deps, operator: { id: op.operatorId, name: `op-${role}`, role } }));
};

describe('apiKeys over tRPC', () => {
  it('creates a key that works, lists it without its secret, and revokes it at once', async () => {
    const admin = await caller('admin');
    const key = await admin.apiKeys.create({ businessId: t.business.businessId, scopes: ['READ_PAYMENT'] });
    expect(key.apiSecret).toMatch(/^ks_/);
    expect((await t.signed('GET', '/v1/payments', undefined, key)).statusCode).toBe(200);
    const listed = await admin.apiKeys.list({ businessId: t.business.businessId });
    expect(listed.map((k) => k.apiKey)).toContain(key.apiKey);
    expect(JSON.stringify(listed)).not.toContain(key.apiSecret);
    await admin.apiKeys.revoke({ apiKeyId: key.apiKeyId });
    expect((await t.signed('GET', '/v1/payments', undefined, key)).statusCode).toBe(401);
    await expect(admin.apiKeys.revoke({ apiKeyId: key.apiKeyId })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a viewer may list but not create or revoke', async () => {
    const viewer = await caller('viewer');
    expect((await viewer.apiKeys.list({ businessId: t.business.businessId })).length).toBeGreaterThan(0);
    await expect(viewer.apiKeys.create({ businessId: t.business.businessId, scopes: ['READ_PAYMENT'] })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
