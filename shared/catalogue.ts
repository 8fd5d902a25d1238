import type { Endpoint } from './endpoint.js';
import { getMe } from './api-keys.js';
import {
  answerMfa,
  cancelJob,
  enqueueTarification,
  getAutomationStatus,
  getJob,
  getJobArtifact,
  getMfaImage,
  listJobs,
} from './automation.js';
import { getProductSchema, listProducts } from './products.js';
import {
  createComparison,
  createConseil,
  getComparison,
  getConseilPdf,
  getRiskSchema,
  listComparisons,
  listConseils,
} from './comparaisons.js';
import { getWallet } from './wallet.js';
import {
  createClient,
  createOpportunity,
  eraseClient,
  getClient,
  getOpportunity,
  listClients,
  listOpportunities,
  updateClient,
  updateOpportunity,
} from './crm-endpoints.js';
import { addOpportunityNote, CONSOLE_NOTE_ENDPOINTS, listOpportunityNotes } from './opportunity-notes.js';
import { createDevis, downloadDevisPdf, getDevis, getDevisPdf, listDevis, signDevis } from './devis.js';
import { downloadDevisDocument, getDevisDocument } from './devis-documents.js';
import { CONSOLE_ACCOUNT_ENDPOINTS } from './console-account.js';
import { CONSOLE_ADMIN_ENDPOINTS } from './console-admin.js';
import { CONSOLE_AUTOMATION_ENDPOINTS } from './console-automation.js';
import { getJobsDashboard } from './console-dashboard.js';
import { CONSOLE_COMPARISON_ENDPOINTS } from './console-comparaisons.js';
import { CONSOLE_PAGE_ENDPOINTS } from './console-pages.js';
import { CONSOLE_IMPORT_ENDPOINTS } from './console-import.js';
import { CONSOLE_RECORDS_ENDPOINTS } from './console-records.js';
import { CONSOLE_SEARCH_ENDPOINTS } from './console-search.js';
import { CONSOLE_SESSION_ENDPOINTS } from './console-session.js';
import { CONSOLE_WEBHOOK_ENDPOINTS } from './console-webhooks.js';
import { getApiDocs, getConsoleOpenApiDocument, getHealth, getOpenApiDocument } from './meta.js';
import { MCP_AND_OAUTH_ENDPOINTS } from './oauth-endpoints.js';
import { CONSOLE_SYNC_ENDPOINTS } from './console-sync.js';
import { CONSOLE_LAN_ENDPOINTS } from './lan.js';
import { listAuditEntries } from './audit.js';
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
  listOpportunityNotes,
  addOpportunityNote,
  createClient,
  listClients,
  getClient,
  updateClient,
  eraseClient,
  createDevis,
  listDevis,
  getDevis,
  signDevis,
  getDevisPdf,
  downloadDevisPdf,
  getDevisDocument,
  downloadDevisDocument,
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
  getRiskSchema,
  createComparison,
  getComparison,
  listComparisons,
  createConseil,
  getConseilPdf,
  listConseils,
  enqueueTarification,
  getJob,
  listJobs,
  cancelJob,
  answerMfa,
  getMfaImage,
  getJobArtifact,
  getWallet,
  getAutomationStatus,
  getOpenApiDocument,
  getApiDocs,
];

/** The public document: the REST API, and the MCP endpoint with its authorization server, which clients call too. */
export const PUBLIC_DOCUMENT_ENDPOINTS: readonly Endpoint[] = [...PUBLIC_ENDPOINTS, ...MCP_AND_OAUTH_ENDPOINTS];

/** The console's document: its API, its pages, and the service's health. */
export const CONSOLE_DOCUMENT_ENDPOINTS: readonly Endpoint[] = [
  ...CONSOLE_SESSION_ENDPOINTS,
  ...CONSOLE_ADMIN_ENDPOINTS,
  ...CONSOLE_ACCOUNT_ENDPOINTS,
  ...CONSOLE_AUTOMATION_ENDPOINTS,
  getJobsDashboard,
  ...CONSOLE_COMPARISON_ENDPOINTS,
  ...CONSOLE_RECORDS_ENDPOINTS,
  ...CONSOLE_SEARCH_ENDPOINTS,
  ...CONSOLE_IMPORT_ENDPOINTS,
  ...CONSOLE_NOTE_ENDPOINTS,
  ...CONSOLE_WEBHOOK_ENDPOINTS,
  ...CONSOLE_SYNC_ENDPOINTS,
  ...CONSOLE_LAN_ENDPOINTS,
  listAuditEntries,
  ...CONSOLE_PAGE_ENDPOINTS,
  getHealth,
  getConsoleOpenApiDocument,
];
