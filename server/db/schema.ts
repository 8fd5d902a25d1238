/** Every module's tables, gathered for drizzle-kit and for the typed database handle. */
export * from '../tenancy/schema.js';
export * from '../api-keys/schema.js';
export * from '../events/schema.js';
export * from '../crm/schema.js';
export * from '../devis/schema.js';
export * from '../idempotency/schema.js';
export * from '../webhooks/schema.js';
export * from '../credentials/schema.js';
export * from '../wallet/schema.js';
export * from '../automation/schema.js';
export * from '../comparaisons/schema.js';
export * from '../console/schema.js';
export * from '../oauth/schema.js';
export * from '../sync/schema.js';
export * from '../lan/schema.js';
export * from '../audit/schema.js';
