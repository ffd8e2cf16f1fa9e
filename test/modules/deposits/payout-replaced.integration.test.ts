/**
 * A payout's transaction replaced on chain (a fee bump): the refund or withdrawal that sent it shows
 * the new hash, with an event keeping the old one (and an open checkout hears of a refund's); anything else is left alone. Real PostgreSQL,
 * the sandbox chain (the fee bump itself runs on anvil: test/adapters/evm/signer, test/adapters/live/evm-live).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordReplacedPayout } from '../../../server/modules/deposits/index.js';
import { broadcastRefund } from '../../../server/modules/deposits/refund-broadcast.job.js';
import { CHANNEL } from '../../../server/modules/payments/live-updates.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/worker.js';
import { mismatchRefund } from './refund-fixture.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { KASSA_SANDBOX_CONFIRM_DELAY_S: '3600' } });
});
afterAll(async () => {
  await t.close();
});

const NEW_HASH = `0x${'ab'.repeat(32)}`;

describe('recordReplacedPayout', () => {
  it("a refund's transaction replaced: the payment shows the new hash; an event keeps the old; the same report again changes nothing", async () => {
    const { paymentId, refundId } = await mismatchRefund(t, 'replaced-1');
    const refund = { id: refundId };
    expect(await broadcastRefund(t.deps, t.deps.chains, refund!.id)).toBe('CONFIRMED');
    const before = (await t.signed('GET', `/v1/payments/${paymentId}`)).json().deposits[0].refund.transactionId as string;
    expect(before).toMatch(/^0x[0-9a-f]{64}$/);

    const notified: string[] = [];
    const listening = await t.db.sql.listen(CHANNEL, (paymentIdNotified) => notified.push(paymentIdNotified));
    expect(await recordReplacedPayout(t.db.db, `refund:${refund!.id}`, NEW_HASH, t.clock.now())).toBe('RECORDED');
    // an open checkout hears of it
    await eventually(async () => (notified.includes(paymentId) ? true : null), 5_000, 'the checkout notification');
    await listening.unlisten();
    expect((await t.signed('GET', `/v1/payments/${paymentId}`)).json().deposits[0].refund).toMatchObject({ status: 'CONFIRMED', transactionId: NEW_HASH });
    const events = await t.db.sql<{ from_status: string; to_status: string; data: unknown }[]>`
      select from_status, to_status, data from events where entity_type = 'refund' and entity_id = ${refund!.id} order by id`;
    expect(events.at(-1)).toEqual({ from_status: 'CONFIRMED', to_status: 'CONFIRMED', data: { previousTransactionId: before, transactionId: NEW_HASH } });

    expect(await recordReplacedPayout(t.db.db, `refund:${refund!.id}`, NEW_HASH, t.clock.now())).toBe('UNCHANGED');
    const [count] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from events where entity_type = 'refund' and entity_id = ${refund!.id}`;
    expect(count!.n).toBe(events.length);
  });

  it('a sweep, a gas top-up or an id that is no payout of Kassa: NOT_A_PAYOUT, nothing written', async () => {
    const [before] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from events`;
    for (const id of ['sweep:ETH:0xabc:0', 'sweep:ETH:0xabc:0:gas:1', 'withdrawal:not-a-uuid', 'w-1']) {
      expect(await recordReplacedPayout(t.db.db, id, NEW_HASH, t.clock.now())).toBe('NOT_A_PAYOUT');
    }
    expect(await recordReplacedPayout(t.db.db, 'withdrawal:00000000-0000-4000-8000-000000000000', NEW_HASH, t.clock.now())).toBe('UNCHANGED');
    const [after] = await t.db.sql<{ n: number }[]>`select count(*)::int as n from events`;
    expect(after!.n).toBe(before!.n);
  });
});
