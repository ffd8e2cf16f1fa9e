/** The ledger module's public face: other code imports only this file (jobs also reach its *.job.ts). */
export * from './ledger.service.js';
