/** What withdrawals need from outside: rates (valuation) and screening of receivers. */
import type { Database, Queryable } from '../../../db/client.js';
import type { WithdrawalRow } from './withdrawal-record.rules.js';
import type { WithdrawalStatus } from './withdrawal.rules.js';
import type { ScreeningPort } from '../compliance/index.js';
import type { RatesPort } from '../money/index.js';
import type { PlatformDeps } from '../../platform/runtime.js';
import type { NetworkAccess } from '../networks/index.js';

/** A withdrawal reached a final status; `callbackStatus` is what its callback reports (REJECTED ends as FAILED). */
export type WithdrawalEnded = {
  type: 'withdrawal.ended';
  withdrawal: WithdrawalRow;
  outcome: WithdrawalStatus;
  callbackStatus: 'COMPLETED' | 'FAILED' | 'BLOCKED';
  at: Date;
};

/** Runs inside the transaction of the outcome (`tx`); throwing rolls the outcome back. */
export type WithdrawalEventSubscriber = (tx: Queryable, event: WithdrawalEnded) => Promise<void>;

export type WithdrawalsDeps = PlatformDeps & {
  database: Database;
  rates: RatesPort;
  screening: ScreeningPort;
  /** The networks offered and the destination address formats (sandbox or live). */
  networks: NetworkAccess;
  /** Called in order, in the transaction of each outcome. */
  withdrawalSubscribers: readonly WithdrawalEventSubscriber[];
};
