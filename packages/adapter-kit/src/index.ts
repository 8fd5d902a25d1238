/**
 * The adapter API: the one module an insurer adapter imports from Courtier. Adapters use this zod
 * (re-exported) for their product schemas, so that Courtier reads them with its own.
 */
export { z } from 'zod';
export type { Frame, Locator, Page } from 'playwright-core';
export {
  defineInsurer,
  RobotError,
  type InsurerAdapter,
  type InsurerCredentials,
  type InsurerFactory,
  type InsurerHost,
  type LoginCheck,
  type OfferGuarantee,
  type ProductDefinition,
  type ProductKind,
  type RobotContext,
  type RobotDocument,
  type RobotOffer,
  type RobotResult,
} from './adapter.js';
export {
  HUMAN_STEP_IMAGE_MAX_BYTES,
  humanStepKind,
  humanSteps,
  type AskPerson,
  type HumanAnswer,
  type HumanChoice,
  type HumanStep,
  type HumanStepKind,
} from './human-step.js';
export { expectPage, type PageCheck, type PageExpectation, type PageLandmark, type PortalChangedDetails } from './page-check.js';
export {
  cancelled,
  firstLine,
  isTimeout,
  normaliseSpaces,
  parseEuros,
  PortalDriver,
  type DriverContext,
  type PortalTimeouts,
} from './portal-driver.js';
export {
  autoRiskSchema,
  homeRiskSchema,
  LINE_GUARANTEES,
  RISK_EXAMPLES,
  RISK_LINES,
  type AutoRisk,
  type ExtraQuestion,
  type HomeRisk,
  type LineGuarantee,
  type RiskLine,
  type RiskMapping,
  type RiskMappings,
  type RiskOf,
} from './risks.js';
export {
  ADAPTER_API_VERSION,
  ADAPTER_KEYWORD,
  adapterPackageSchema,
  HUMAN_STEP_KINDS,
  insurerCodeSchema,
  insurerManifestSchema,
  productJsonSchema,
  type AdapterPackage,
  type InsurerManifest,
} from './manifest.js';
