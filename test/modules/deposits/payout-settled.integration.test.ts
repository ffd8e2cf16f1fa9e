/**
 * A live payout ends when the chain says so (payout-settled.ts): sent, a refund stays PENDING and a
 * withdrawal PROCESSING, each with its hash; final on chain, CONFIRMED / COMPLETED at the block's
 * time, or, when the chain ran it and it failed, NON_REFUNDABLE / FAILED with the debit credited
 * back. Real PostgreSQL; the chain is a port answering as a live one does (sent, not final), since
 * the sandbox's is final at once. The same on real nodes: test/adapters/live/evm-live and ltc-live.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSettledPayout, unsettledPayouts } from '../../../server/modules/deposits/index.js';
import { broadcastRefund } from '../../../server/modules/deposits/refund-broadcast.job.js';
import { broadcastWithdrawal } from '../../../server/modules/withdrawals/withdrawal-broadcast.job.js';
import { postEntries } from '../../../server/modules/ledger/index.js';
import type { Broadcast, ChainPorts } from '../../../server/modules/networks/ports.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { mismatchRefund } from './refund-fixture.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '3600', KASSA_SANDBOX_BROADCAST_DELAY_S: '3600' } });
});
afterAll(async () => {
  await t.close();
});

/** A live chain's answer to a broadcast: the transaction is out, not final. One hash per broadcast id, as the signer's idempotency gives. */
const sent: Broadcast[] = [];
const hashOf = (id: string) => `0x${Buffer.from(id).toString('hex').padEnd(64, '0').slice(0, 64)}`;
const liveEth: ChainPorts = {
  ETH: {
    network: 'ETH',
    broadcast: async (tx) => {
      sent.push(tx);
      return { txHash: hashOf(tx.id), confirmedAt: null };
    },
  },
};

const eventsOf = (type: string, id: string) =>
  t.db.sql<{ from_status: string | null; to_status: string; reason: string; data: Record<string, unknown> }[]>`
    select from_status, to_status, reason, data from events where entity_type = ${type} and entity_id = ${id} order by id`;

describe('refunds', () => {
  it('sent: PENDING with its hash, listed as unsettled; failed on chain: NON_REFUNDABLE, the hash kept; recorded once', async () => {
    const { paymentId, refundId: id } = await mismatchRefund(t, 'settled-refund');
    const hash = hashOf(`refund:${id}`);

    expect(await broadcastRefund(t.deps, liveEth, id)).toBe('PENDING');
    const refundRecord = async () => (await t.signed('GET', `/v1/payments/${paymentId}`)).json().deposits[0].refund;
    expect(await refundRecord()).toMatchObject({ status: 'PENDING', transactionId: hash });
    expect(await unsettledPayouts(t.db.db, 'ETH')).toContain(`refund:${id}`);
    expect(await unsettledPayouts(t.db.db, 'BSC')).not.toContain(`refund:${id}`);
    // The job again (a retry): the same transaction, nothing more recorded.
    const events = await eventsOf('refund', id);
    expect(await broadcastRefund(t.deps, liveEth, id)).toBe('PENDING');
    expect(await eventsOf('refund', id)).toEqual(events);
    expect(events.at(-1)).toMatchObject({ from_status: 'PENDING', to_status: 'PENDING', data: { transactionId: hash } });

    const at = new Date('2026-11-25T10:00:00Z');
    expect(await recordSettledPayout(t.deps, `refund:${id}`, { txHash: hash, success: false, at })).toBe('NON_REFUNDABLE');
    expect(await refundRecord()).toMatchObject({ status: 'NON_REFUNDABLE', transactionId: hash });
    expect((await eventsOf('refund', id)).at(-1)!.reason).toMatch(/failed on chain/);
    expect(await unsettledPayouts(t.db.db, 'ETH')).not.toContain(`refund:${id}`);
    expect(await recordSettledPayout(t.deps, `refund:${id}`, { txHash: hash, success: true, at })).toBe('UNCHANGED');
    expect((await refundRecord()).status).toBe('NON_REFUNDABLE');
  });
});

describe('withdrawals', () => {
  async function withdrawal(clientWithdrawalId: string) {
    await postEntries(t.db.db, [{ businessId: t.business.businessId, account: 'MERCHANT', currency: 'EUR', amount: '1000', kind: 'TEST' }], t.clock.now());
    const created = await t.signed('POST', '/v1/withdrawals', {
      clientWithdrawalId, businessId: t.business.businessId, withdrawCurrency: 'ETH', network: 'ETH', address: '0x00000000000000000000000000000000000a11ce', amount: '0.01',
    });
    expect(created.statusCode, created.body).toBe(200);
    return created.json().withdrawalId as string;
  }
  const read = async (id: string) => (await t.signed('GET', `/v1/withdrawals/${id}`)).json();
  const available = async () => (await t.signed('GET', '/v1/balances')).json().balances.find((b: { currency: string }) => b.currency === 'EUR').available as string;

  it('sent: PROCESSING with its hash, no callback; a retry of the job sends nothing new; final: COMPLETED at the block time, once', async () => {
    const id = await withdrawal('settled-w-1');
    expect(await broadcastWithdrawal(t.deps, liveEth, id)).toBe('PROCESSING');
    const hash = hashOf(`withdrawal:${id}`);
    expect(await read(id)).toMatchObject({ status: 'PROCESSING', transactionId: hash, completedAt: null });
    const [deliveries] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from callback_deliveries where subject_id = ${id}`;
    expect(deliveries!.n).toBe(0);
    const broadcasts = sent.length;
    expect(await broadcastWithdrawal(t.deps, liveEth, id)).toBe('PROCESSING');
    expect(sent.length).toBe(broadcasts);
    expect(await unsettledPayouts(t.db.db, 'ETH')).toContain(`withdrawal:${id}`);

    const at = new Date('2026-11-25T10:00:00Z');
    expect(await recordSettledPayout(t.deps, `withdrawal:${id}`, { txHash: hash, success: true, at })).toBe('COMPLETED');
    expect(await read(id)).toMatchObject({ status: 'COMPLETED', transactionId: hash, completedAt: at.getTime() / 1000, actualWithdrawAmount: '0.01' });
    expect(await recordSettledPayout(t.deps, `withdrawal:${id}`, { txHash: hash, success: false, at })).toBe('UNCHANGED');
    expect((await read(id)).status).toBe('COMPLETED');
    expect(await unsettledPayouts(t.db.db, 'ETH')).not.toContain(`withdrawal:${id}`);
  });

  it('failed on chain: FAILED, the debit credited back, the hash on chain kept on the record (here a replacement the job never saw)', async () => {
    const before = await available();
    const id = await withdrawal('settled-w-2');
    await broadcastWithdrawal(t.deps, liveEth, id);
    const onChain = hashOf(`replacement of withdrawal:${id}`);
    expect(await recordSettledPayout(t.deps, `withdrawal:${id}`, { txHash: onChain, success: false, at: new Date() })).toBe('FAILED');
    expect(await read(id)).toMatchObject({ status: 'FAILED', transactionId: onChain });
    // The 1000 EUR posted for it, and nothing taken.
    expect(Number(await available()) - Number(before)).toBe(1000);
  });

  it('a payout on chain whose job never recorded its hash (it kept failing while the signer sent it) is listed, and ended with the hash on chain', async () => {
    const id = await withdrawal('settled-w-3');
    expect((await read(id)).transactionId).toBeNull();
    expect(await unsettledPayouts(t.db.db, 'ETH')).toContain(`withdrawal:${id}`);
    const onChain = hashOf(`withdrawal:${id}`);
    expect(await recordSettledPayout(t.deps, `withdrawal:${id}`, { txHash: onChain, success: true, at: new Date('2026-11-25T11:00:00Z') })).toBe('COMPLETED');
    expect(await read(id)).toMatchObject({ status: 'COMPLETED', transactionId: onChain, completedAt: Date.parse('2026-11-25T11:00:00Z') / 1000 });
    // Its job, should it run after: nothing sent, nothing changed.
    const broadcasts = sent.length;
    expect(await broadcastWithdrawal(t.deps, liveEth, id)).toBe('COMPLETED');
    expect(sent.length).toBe(broadcasts);
  });

  it('a sweep, a gas top-up or an id that is no payout of Kassa: nothing recorded', async () => {
    const [before] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from events`;
    const settled = { txHash: hashOf('x'), success: true, at: new Date() };
    for (const other of ['sweep:ETH:0xabc:0', 'sweep:ETH:0xabc:0:gas:1', 'withdrawal:not-a-uuid', 'w-1']) {
      expect(await recordSettledPayout(t.deps, other, settled)).toBe('NOT_A_PAYOUT');
    }
    expect(await recordSettledPayout(t.deps, 'refund:00000000-0000-4000-8000-000000000000', settled)).toBe('UNCHANGED');
    const [after] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from events`;
    expect(after!.n).toBe(before!.n);
  });
});
