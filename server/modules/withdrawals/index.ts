/** The withdrawals module's public face: other code imports only this file (jobs also reach its *.job.ts). */
export * from './balances.schema.js';
export * from './balances.service.js';
export * from './create-withdrawal.schema.js';
export * from './list-withdrawals.schema.js';
export * from './ports.js';
export * from './whitelist.schema.js';
export * from './whitelist.service.js';
export * from './withdrawal-record.rules.js';
export * from './withdrawal-record.schema.js';
export * from './withdrawal.rules.js';
export * from './withdrawal.service.js';
