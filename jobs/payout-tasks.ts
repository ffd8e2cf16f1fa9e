/** Tasks that move funds: in live mode only a process holding the signer's keys runs them. */
export const PAYOUT_TASKS = ['broadcast_refund', 'broadcast_withdrawal', 'sweep_deposit'] as const;
