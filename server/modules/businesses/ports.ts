import type { Database } from '../../../db/client.js';
import type { PlatformDeps } from '../../platform/runtime.js';

/** What the businesses module is given by the composition root: nothing from outside but the database. */
export type BusinessesDeps = PlatformDeps & { database: Database };
