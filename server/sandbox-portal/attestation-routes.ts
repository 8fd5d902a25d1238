import type { FastifyInstance, FastifyRequest } from 'fastify';
import { attestationFormPage, attestationPage, MESSAGES, notFoundPage } from './pages.js';
import { attestationPdf } from './pdf.js';
import type { Portal } from './portal.js';
import { field, POLICY_PATTERN, type FormBody } from './validation.js';

type PolicyRequest = FastifyRequest<{ Params: { policy: string } }>;

/** The attestation of a policy (a routine, not a quote): its form, its page and its PDF. */
export function attestationRoutes(app: FastifyInstance, portal: Portal): void {
  const { base, clock, html, redirect, signedIn } = portal;

  function validity(): { from: string; to: string } {
    const year = new Date(clock.now()).getUTCFullYear();
    return { from: `01/01/${year}`, to: `31/12/${year}` };
  }

  app.get(
    '/attestation',
    signedIn(async (_request, reply) => html(reply, 200, attestationFormPage(base, '', null))),
  );

  app.post(
    '/attestation',
    signedIn<FastifyRequest<{ Body: FormBody | undefined }>>(async (request, reply) => {
      const policy = field(request.body, 'policy_number').toUpperCase();
      if (policy === '') return html(reply, 422, attestationFormPage(base, policy, 'Le champ « Numéro de contrat » est obligatoire.'));
      if (!POLICY_PATTERN.test(policy)) return html(reply, 404, attestationFormPage(base, policy, MESSAGES.policyNotFound));
      return redirect(reply, `attestation/${policy}`);
    }),
  );

  app.get(
    '/attestation/:policy',
    signedIn<PolicyRequest>(async (request, reply) => {
      const policy = request.params.policy;
      if (!POLICY_PATTERN.test(policy)) return html(reply, 404, attestationFormPage(base, policy, MESSAGES.policyNotFound));
      const { from, to } = validity();
      return html(reply, 200, attestationPage(base, policy, from, to));
    }),
  );

  app.get(
    '/attestation/:policy/pdf',
    signedIn<PolicyRequest>(async (request, reply) => {
      const policy = request.params.policy;
      if (!POLICY_PATTERN.test(policy)) return html(reply, 404, notFoundPage(base, true));
      const { from, to } = validity();
      const pdf = await attestationPdf({ policyNumber: policy, validFrom: from, validTo: to, createdAtMs: clock.now() });
      return reply
        .type('application/pdf')
        .header('Content-Disposition', `attachment; filename="attestation-${policy}.pdf"`)
        .header('Cache-Control', 'no-store')
        .send(Buffer.from(pdf));
    }),
  );
}
