import type { FastifyInstance } from 'fastify';
import { attestationFormPage, attestationPage, MESSAGES, notFoundPage } from './pages.js';
import { attestationPdf } from './pdf.js';
import type { Portal } from './portal.js';
import { field, POLICY_PATTERN, type FormBody } from './validation.js';

type PolicyRoute = { Params: { policy: string } };

/**
 * The attestation of a policy (a routine, not a quote): its form, its page and its PDF. An
 * encapsulated plugin: every page needs a logged-in broker, checked once by its preHandler.
 */
export async function attestationRoutes(app: FastifyInstance, { portal }: { portal: Portal }): Promise<void> {
  const { base, clock, html, redirect } = portal;
  app.addHook('preHandler', portal.requireSession);

  function validity(): { from: string; to: string } {
    const year = new Date(clock.now()).getUTCFullYear();
    return { from: `01/01/${year}`, to: `31/12/${year}` };
  }

  app.get('/attestation', async (_request, reply) => html(reply, 200, attestationFormPage(base, '', null)));

  app.post<{ Body: FormBody | undefined }>('/attestation', async (request, reply) => {
    const policy = field(request.body, 'policy_number').toUpperCase();
    if (policy === '') return html(reply, 422, attestationFormPage(base, policy, 'Le champ « Numéro de contrat » est obligatoire.'));
    if (!POLICY_PATTERN.test(policy)) return html(reply, 404, attestationFormPage(base, policy, MESSAGES.policyNotFound));
    return redirect(reply, `attestation/${policy}`);
  });

  app.get<PolicyRoute>('/attestation/:policy', async (request, reply) => {
    const policy = request.params.policy;
    if (!POLICY_PATTERN.test(policy)) return html(reply, 404, attestationFormPage(base, policy, MESSAGES.policyNotFound));
    const { from, to } = validity();
    return html(reply, 200, attestationPage(base, policy, from, to));
  });

  app.get<PolicyRoute>('/attestation/:policy/pdf', async (request, reply) => {
    const policy = request.params.policy;
    if (!POLICY_PATTERN.test(policy)) return html(reply, 404, notFoundPage(base, true));
    const { from, to } = validity();
    const pdf = await attestationPdf({ policyNumber: policy, validFrom: from, validTo: to, createdAtMs: clock.now() });
    return reply
      .type('application/pdf')
      .header('Content-Disposition', `attachment; filename="attestation-${policy}.pdf"`)
      .header('Cache-Control', 'no-store')
      .send(Buffer.from(pdf));
  });
}
