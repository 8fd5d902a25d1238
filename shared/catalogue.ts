import type { Endpoint } from './endpoint.js';
import { getMe } from './api-keys.js';
import { getApiDocs, getOpenApiDocument } from './meta.js';

/** Every endpoint of the public REST API; the OpenAPI document is generated from this list. */
export const PUBLIC_ENDPOINTS: readonly Endpoint[] = [getMe, getOpenApiDocument, getApiDocs];
