/**
 * Live checkout updates across processes: every change to a payment (its
 * status, a deposit, a refund) sends `pg_notify('kassa_payment', id)` inside
 * the changing transaction, so it is delivered on commit to every web
 * process listening, whichever process made the change.
 */
import { EventEmitter } from 'node:events';
import { sql } from 'drizzle-orm';
import type { Queryable, Sql } from '../../../db/client.js';

export const CHANNEL = 'kassa_payment';

/** Call inside the transaction that changed the payment: delivered only if it commits. */
export async function notifyPayment(tx: Queryable, paymentId: string): Promise<void> {
  await tx.execute(sql`select pg_notify(${CHANNEL}, ${paymentId})`);
}

export class LiveUpdates {
  private readonly emitter = new EventEmitter();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(private readonly sql: Sql) {
    // One listener per open checkout: no warning at a few thousand.
    this.emitter.setMaxListeners(0);
  }

  /** One dedicated LISTEN connection; postgres.js re-listens after a reconnect. */
  async start(): Promise<void> {
    const { unlisten } = await this.sql.listen(CHANNEL, (paymentId) => this.emitter.emit(paymentId));
    this.unlisten = unlisten;
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
    this.emitter.removeAllListeners();
  }

  subscribe(paymentId: string, onChange: () => void): () => void {
    this.emitter.on(paymentId, onChange);
    return () => this.emitter.off(paymentId, onChange);
  }
}

/** The subscriber that wakes live checkouts on every payment status change. */
export const liveCheckoutSubscriber = (tx: Queryable, event: { paymentId: string }): Promise<void> => notifyPayment(tx, event.paymentId);
