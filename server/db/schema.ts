/** Every module's tables, gathered for drizzle-kit and for the typed database handle. */
export * from '../tenancy/schema.js';
export * from '../api-keys/schema.js';
