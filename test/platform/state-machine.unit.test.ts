/** The one state machine: the table decides, `null` is "not created yet", terminal statuses follow from the table. */
import { describe, expect, it } from 'vitest';
import { defineStateMachine, illegalTransition } from '../../server/platform/state-machine.js';
import { PAYMENT_MACHINE } from '../../server/modules/payments/payment-states.rules.js';
import { DEPOSIT_MACHINE, REFUND_MACHINE } from '../../server/modules/deposits/deposit-states.rules.js';
import { WITHDRAWAL_MACHINE } from '../../server/modules/withdrawals/withdrawal.rules.js';

describe('defineStateMachine', () => {
  const door = defineStateMachine({ name: 'Door', states: ['OPEN', 'SHUT', 'GONE'], initial: ['SHUT'], transitions: { OPEN: ['SHUT'], SHUT: ['OPEN', 'GONE'], GONE: [] } });

  it('allows only the listed moves, and creation only in an initial status', () => {
    expect(door.can('SHUT', 'OPEN')).toBe(true);
    expect(door.can('OPEN', 'GONE')).toBe(false);
    expect(door.can(null, 'SHUT')).toBe(true);
    expect(door.can(null, 'OPEN')).toBe(false);
    expect(door.terminal).toEqual(['GONE']);
  });

  it('names the entity and both ends in the refusal', () => {
    const e = illegalTransition('Door', 'd1', null, 'OPEN');
    expect([e.status, e.code, e.message]).toEqual([409, 'ILLEGAL_TRANSITION', 'Door d1 cannot move from (new) to OPEN.']);
  });

  it("describes Kassa's four entities, each with the terminal statuses of CONTRACT §5", () => {
    expect(PAYMENT_MACHINE.terminal).toEqual(['EXPIRED', 'BLOCKED']);
    // CONFIRMED is not: a credit reorganised off the chain for good is reversed, the deposit FAILED (CONTRACT §10);
    // nor FAILED: a transaction mined again after it left the chain is judged again (and an
    // UNPROCESSABLE one blocked if its sender was listed meanwhile).
    expect(DEPOSIT_MACHINE.terminal).toEqual(['BLOCKED']);
    // NON_REFUNDABLE is not: a refund cancelled because its deposit left the chain is sent if the deposit comes back.
    expect(REFUND_MACHINE.terminal).toEqual(['CONFIRMED']);
    expect(WITHDRAWAL_MACHINE.terminal).toEqual(['COMPLETED', 'FAILED', 'BLOCKED', 'REJECTED']);
    expect(WITHDRAWAL_MACHINE.can(null, 'COMPLETED')).toBe(false);
  });
});
