/** The callbacks module's public face: other code imports only this file (jobs also reach its *.job.ts). */
export * from './callback-body.schema.js';
export * from './delivery.service.js';
export * from './dispatcher.js';
export * from './payment-callback-body.rules.js';
export * from './payment-callbacks.js';
export * from './ports.js';
export * from './signing.js';
export * from './withdrawal-callback-body.rules.js';
export * from './withdrawal-callbacks.js';
