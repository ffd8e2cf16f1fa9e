/** What withdrawals need from outside: rates (valuation) and screening of receivers. */
import type { Database } from '../../../db/client.js';
import type { ScreeningPort } from '../compliance/index.js';
import type { RatesPort } from '../money/index.js';
import type { PlatformDeps } from '../../platform/runtime.js';

export type WithdrawalsDeps = PlatformDeps & { database: Database; rates: RatesPort; screening: ScreeningPort };
