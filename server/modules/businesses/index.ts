/** The businesses module's public face: other code imports only this file (jobs also reach its *.job.ts). */
export * from './bootstrap.js';
export * from './business.service.js';
export * from './caller-proof.js';
export * from './ports.js';
