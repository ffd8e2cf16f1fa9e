/** The payments module's public face: other code imports only this file (jobs also reach its *.job.ts). */
export * from './checkout-view.rules.js';
export * from './checkout.service.js';
export * from './create-payment.schema.js';
export * from './deposit-reads.js';
export * from './deposit-record.rules.js';
export * from './expiry.service.js';
export * from './list-payments.schema.js';
export * from './live-updates.js';
export * from './payment-record.rules.js';
export * from './payment-record.schema.js';
export * from './payment-reevaluation.js';
export * from './payment-states.rules.js';
export * from './payment-status.rules.js';
export * from './payment-transition.js';
export * from './payment.service.js';
export * from './ports.js';
export * from './pricing.js';
