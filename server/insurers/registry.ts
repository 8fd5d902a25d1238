import type { HumanStepKind, InsurerAdapter, InsurerCredentials, InsurerManifest } from '@courtier/adapter-kit';

/** Where an insurer's package came from. */
export type InsurerSource = 'built-in' | 'installed';

/** Who vouched for an installed package's code. */
export interface AdapterSigner {
  /** `ed25519:` and the first 16 bytes of the SHA-256 of the public key (SPKI DER), in hex. */
  fingerprint: string;
  /** Whether the IT policy's trustedKeys holds that key. */
  trusted: boolean;
}

/** An insurer this install prices with: its adapter's code, and what its manifest says. */
export interface Insurer extends InsurerAdapter {
  /** The `compagnie` of API requests. */
  code: string;
  name: string;
  /** The adapter package's version; every job records it. */
  version: string;
  /**
   * A demo insurer, which test keys price with (integrators try everything without a real portal),
   * logging in with its public demo account when the cabinet set none.
   */
  testKeys?: { demoCredentials: InsurerCredentials };
  /**
   * The credential fields its manifest declares: the extra ones a cabinet may set, and which of
   * them are secrets. Absent for an insurer given in code (tests): any extra field, none secret.
   */
  credentialFields?: InsurerManifest['credentials'];
  /** What its robot may ask a person for. Absent for an insurer given in code (tests): anything. */
  humanSteps?: readonly HumanStepKind[];
  /**
   * What the robot's browser may load: URLs whose origin is listed, or that start with one of the
   * prefixes (a sandbox portal's path on this service). Absent for an insurer given in code (tests).
   */
  reach?: { origins: readonly string[]; prefixes: () => readonly string[] };
  /** Absent for an insurer given in code (tests). */
  origin?: { source: InsurerSource; apiRange: string; dir: string; signer: AdapterSigner | null };
}

/** The insurers this install can price with, by code; a reload replaces them all at once. */
export interface InsurerRegistry {
  list(): readonly Insurer[];
  get(code: string): Insurer | undefined;
  /**
   * The demo insurer a test key's request runs on: the one compagnie names; for any other compagnie,
   * the first demo insurer (by code) that offers the product, else the first at all. Undefined when
   * this install offers no demo insurer.
   */
  forTestKey(request: { compagnie: string; produit: string }): DemoInsurer | undefined;
  /** What the last load refused, one line each (a package that did not load). */
  problems(): readonly string[];
  /** Replaces the insurers (a package installed, removed or updated). A job already running keeps its adapter. */
  replace(insurers: readonly Insurer[], problems?: readonly string[]): void;
}

type DemoInsurer = Insurer & Required<Pick<Insurer, 'testKeys'>>;

interface Contents {
  list: readonly Insurer[];
  byCode: Map<string, Insurer>;
  demos: readonly DemoInsurer[];
  problems: readonly string[];
}

function contentsOf(insurers: readonly Insurer[], problems: readonly string[]): Contents {
  const demos = insurers
    .filter((a): a is DemoInsurer => a.testKeys !== undefined)
    .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  return { list: insurers, byCode: new Map(insurers.map((a) => [a.code, a])), demos, problems };
}

function demoFor(demos: readonly DemoInsurer[], request: { compagnie: string; produit: string }): DemoInsurer | undefined {
  return (
    demos.find((a) => a.code === request.compagnie) ?? demos.find((a) => a.products.some((p) => p.code === request.produit)) ?? demos[0]
  );
}

export function createInsurerRegistry(insurers: readonly Insurer[], problems: readonly string[] = []): InsurerRegistry {
  let contents = contentsOf(insurers, problems);
  return {
    list: () => contents.list,
    get: (code) => contents.byCode.get(code),
    forTestKey: (request) => demoFor(contents.demos, request),
    problems: () => contents.problems,
    replace(next, nextProblems = []) {
      contents = contentsOf(next, nextProblems);
    },
  };
}
