import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { changeLan, downloadCaCertificate, getLanStatus, liftLanBlock, listLanBlocks } from '../../shared/lan.js';
import { consoleUser } from './guard.js';
import { liftLanBlock as liftBlock, listLanBlocks as listBlocks } from '../lan/blocks.js';
import { requestActor } from '../audit/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { isFromThisMachine } from '../platform/http/client-address.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import type { LanListener } from '../lan/listener.js';
import type { MachineNetwork } from '../lan/plan.js';
import { caCertificate } from '../lan/office-ca.js';
import { changeLan as applyLanChange, lanStatus } from '../lan/service.js';

/** The CA download (open on the LAN listener) and the console's LAN switch (an admin at the machine itself). */
export async function lanRoutes(
  app: FastifyInstance,
  options: { deps: Deps; listener: LanListener; network: MachineNetwork },
): Promise<void> {
  const { deps, listener, network } = options;

  registerEndpoint(app, downloadCaCertificate, (_request, reply) => {
    const pem = caCertificate(deps);
    if (pem === null) throw new ApiError('not_found', 'Office LAN mode was never enabled on this machine: there is no CA to download.');
    return reply
      .header('Content-Type', 'application/x-pem-file')
      .header('Content-Disposition', 'attachment; filename="courtier-office-ca.crt"')
      .header('Cache-Control', 'no-cache')
      .send(pem);
  });

  registerEndpoint(app, getLanStatus, (request) => ({ ...lanStatus(deps, network), changeable_here: isFromThisMachine(request) }));
  registerEndpoint(app, listLanBlocks, () => ({ data: listBlocks(deps) }));
  registerEndpoint(app, liftLanBlock, (request, reply) => {
    liftBlock(deps, request.params.address, requestActor(request), consoleUser(request).cabinetId);
    return reply.code(204).send();
  });

  // Who may widen what the office exposes: only a person at this machine, whatever their role elsewhere.
  const thisMachineOnly: onRequestHookHandler = (request, _reply, done) => {
    if (isFromThisMachine(request)) return done();
    done(
      new ApiError(
        'local_only',
        'The office LAN mode can be switched only from the machine that runs Courtier (its console over loopback, or `courtier lan`).',
      ),
    );
  };

  registerEndpoint(
    app,
    changeLan,
    async (request) => {
      await applyLanChange(deps, request.body, network, requestActor(request));
      await listener.reconcile();
      return { ...lanStatus(deps, network), changeable_here: true };
    },
    { onRequest: thisMachineOnly },
  );
}
