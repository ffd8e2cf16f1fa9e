/** What withdrawals need from outside: rates (valuation) and screening of receivers. */
import type { Queryable } from '../../../db/client.js';
import type { WithdrawalRow } from './withdrawal-record.rules.js';
import type { WithdrawalStatus } from './withdrawal.rules.js';
import type { ScreeningPort } from '../compliance/index.js';
import type { Subscriber } from '../../platform/state-machine.js';
import type { NetworkDeps } from '../networks/index.js';

/** A withdrawal reached a final status; `callbackStatus` is what its callback reports (REJECTED ends as FAILED). */
export type WithdrawalEnded = {
  type: 'withdrawal.ended';
  withdrawal: WithdrawalRow;
  outcome: WithdrawalStatus;
  callbackStatus: 'COMPLETED' | 'FAILED' | 'BLOCKED';
  at: Date;
};

export type WithdrawalEventSubscriber = Subscriber<Queryable, WithdrawalEnded>;

/** Rates value a withdrawal, screening checks its receiver; the subscribers are called in order, in the transaction of each outcome. */
export type WithdrawalsDeps = NetworkDeps & { screening: ScreeningPort; withdrawalSubscribers: readonly WithdrawalEventSubscriber[] };
