import type { Endpoint } from './endpoint.js';
import { getMe } from './api-keys.js';
import { answerMfa, cancelJob, enqueueTarification, getAutomationStatus, getJob, getJobArtifact, getProductSchema, getWallet, listJobs, listProducts } from './automation.js';
import { createClient, createOpportunity, getClient, getOpportunity, listClients, listOpportunities, updateOpportunity } from './crm.js';
import { createDevis, downloadDevisPdf, getDevis, getDevisPdf, listDevis, signDevis } from './devis.js';
import { getApiDocs, getOpenApiDocument } from './meta.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listDeliveries,
  listWebhooks,
  replayDelivery,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
} from './webhooks.js';

/** Every endpoint of the public REST API; the OpenAPI document is generated from this list. */
export const PUBLIC_ENDPOINTS: readonly Endpoint[] = [
  getMe,
  createOpportunity,
  listOpportunities,
  getOpportunity,
  updateOpportunity,
  createClient,
  listClients,
  getClient,
  createDevis,
  listDevis,
  getDevis,
  signDevis,
  getDevisPdf,
  downloadDevisPdf,
  createWebhook,
  listWebhooks,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  testWebhook,
  listDeliveries,
  replayDelivery,
  listProducts,
  getProductSchema,
  enqueueTarification,
  getJob,
  listJobs,
  cancelJob,
  answerMfa,
  getJobArtifact,
  getWallet,
  getAutomationStatus,
  getOpenApiDocument,
  getApiDocs,
];
