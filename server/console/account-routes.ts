import type { FastifyInstance, FastifyRequest } from 'fastify';
import { changeOwnPassword, removeUser, resetUserPassword, setUserDisabled } from '../../shared/console-account.js';
import { requestActor } from '../audit/service.js';
import { consoleUser } from './guard.js';
import { describeSession, type LoginThrottle } from './service.js';
import { isFromThisMachine } from '../platform/http/client-address.js';
import type { Deps } from '../deps.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import * as account from '../account/service.js';

/** Console API of account basics: one's own password; an administrator's reset, disable, enable, removal. */
export async function accountRoutes(app: FastifyInstance, { deps, throttle }: { deps: Deps; throttle: LoginThrottle }): Promise<void> {
  const acting = (request: FastifyRequest): account.Acting => ({ actor: requestActor(request), selfId: consoleUser(request).userId });

  registerEndpoint(app, changeOwnPassword, async (request) => {
    const { current_password, new_password } = request.body;
    const user = await account.changeOwnPassword(deps, throttle, consoleUser(request), {
      currentPassword: current_password,
      newPassword: new_password,
      origin: { address: request.ip, local: isFromThisMachine(request) },
      actor: requestActor(request),
    });
    return describeSession(user);
  });

  // The only time the temporary password exists outside the person's head: in this answer.
  registerEndpoint(app, resetUserPassword, async (request) => {
    const reset = await account.resetPassword(deps, consoleUser(request).cabinetId, request.params.id, acting(request));
    return { user: reset.user, temporary_password: reset.temporaryPassword };
  });

  registerEndpoint(app, setUserDisabled, (request) =>
    account.setDisabled(deps, consoleUser(request).cabinetId, request.params.id, request.body.disabled, acting(request)),
  );

  registerEndpoint(app, removeUser, (request, reply) => {
    account.remove(deps, consoleUser(request).cabinetId, request.params.id, acting(request));
    return reply.code(204).send();
  });
}
