export * from './scopes.js';
export * from './errors.js';
export * from './endpoint.js';
export * from './api-keys.js';
export * from './meta.js';
export * from './tenancy.js';
