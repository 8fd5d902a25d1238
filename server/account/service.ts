import type { CabinetUser } from '../../shared/console-admin.js';
import type { AuditActor } from '../audit/service.js';
import { recordAudit } from '../audit/service.js';
import { endSessionsOfUser, forgetSessionsOfUser, type AttemptOrigin, type LoginThrottle, type SignedInUser } from '../console/service.js';
import type { Deps } from '../deps.js';
import { ApiError } from '../errors.js';
import { forgetGrantsOfUser, revokeGrantsOfUser } from '../oauth/connected-apps.js';
import * as tenancy from '../tenancy/users.js';

/**
 * Account basics: a person's own password, and what an administrator (or the CLI, for a locked-out
 * one) does to an account. The account lives in tenancy, its sessions in console, its connected
 * apps in oauth: this module ties them so that each change and its endings commit together.
 */

/** Who acts, and on whose behalf: an administrator never acts on their own account here. */
export interface Acting {
  actor: AuditActor;
  /** The acting console user's id (undefined for the CLI). */
  selfId?: string;
}

function refuseSelf(acting: Acting, userId: string, what: string): void {
  if (acting.selfId === userId) {
    throw new ApiError(
      'own_account',
      `You cannot ${what} your own account here; another administrator can, and you change your own password on the My account page.`,
    );
  }
}

/** Ends everything that lets the user in: console sessions and OAuth grants (with their tokens). */
function endAccess(deps: Deps, userId: string): { sessions_ended: number; grants_revoked: number } {
  return { sessions_ended: endSessionsOfUser(deps, userId), grants_revoked: revokeGrantsOfUser(deps, userId) };
}

/**
 * The signed-in person changes their own password. A wrong current password counts as a failed
 * sign-in, so that a session left open cannot be used to guess it faster than the login page allows.
 * Their other sessions end; this one stays.
 */
export async function changeOwnPassword(
  deps: Deps,
  throttle: LoginThrottle,
  user: SignedInUser,
  input: { currentPassword: string; newPassword: string; origin: AttemptOrigin; actor: AuditActor },
): Promise<SignedInUser> {
  const wait = throttle.retryAfter(user.email, input.origin);
  if (wait > 0) {
    throw new ApiError('too_many_login_attempts', `Too many wrong passwords; try again in ${Math.ceil(wait / 60)} min.`, undefined, {
      'Retry-After': String(wait),
    });
  }
  let ended = 0;
  const outcome = await tenancy.changeOwnPassword(deps, user, input, () => {
    ended = endSessionsOfUser(deps, user.userId, user.sessionId);
  });
  if (outcome === 'wrong_current_password') {
    throttle.recordFailure(user.email, input.origin);
    recordAudit(deps, {
      cabinetId: user.cabinetId,
      action: 'user.password_changed',
      result: 'failure',
      actor: input.actor,
      target: user.email,
      details: { reason: 'wrong_current_password' },
    });
    throw new ApiError('wrong_current_password', 'The current password is wrong; nothing was changed.');
  }
  recordAudit(deps, {
    cabinetId: user.cabinetId,
    action: 'user.password_changed',
    actor: input.actor,
    target: user.email,
    details: { user_id: user.userId, other_sessions_ended: ended },
  });
  return { ...user, mustChangePassword: false };
}

/** A temporary password for the user (returned once), who must change it at the next sign-in; their sessions and grants end. */
export async function resetPassword(
  deps: Deps,
  cabinetId: string,
  userId: string,
  acting: Acting,
): Promise<{ user: CabinetUser; temporaryPassword: string }> {
  refuseSelf(acting, userId, 'reset the password of');
  return tenancy.resetUserPassword(deps, cabinetId, userId, (user) => {
    const ended = endAccess(deps, userId);
    recordAudit(deps, {
      cabinetId,
      action: 'user.password_reset',
      actor: acting.actor,
      target: user.email,
      details: { user_id: userId, ...ended },
    });
  });
}

/** Disables (ending sessions and grants at once) or enables an account. */
export function setDisabled(deps: Deps, cabinetId: string, userId: string, disabled: boolean, acting: Acting): CabinetUser {
  refuseSelf(acting, userId, disabled ? 'disable' : 'enable');
  return tenancy.setUserDisabled(deps, cabinetId, userId, disabled, (user) => {
    const ended = disabled ? endAccess(deps, userId) : {};
    recordAudit(deps, {
      cabinetId,
      action: disabled ? 'user.disabled' : 'user.enabled',
      actor: acting.actor,
      target: user.email,
      details: { user_id: userId, ...ended },
    });
  });
}

/** Deletes an account with its sessions and grants; the audit log keeps its email. */
export function remove(deps: Deps, cabinetId: string, userId: string, acting: Acting): CabinetUser {
  refuseSelf(acting, userId, 'remove');
  return tenancy.removeCabinetUser(deps, cabinetId, userId, (user) => {
    forgetSessionsOfUser(deps, userId);
    forgetGrantsOfUser(deps, userId);
    recordAudit(deps, {
      cabinetId,
      action: 'user.removed',
      actor: acting.actor,
      target: user.email,
      details: { user_id: userId, role: user.role },
    });
  });
}

/**
 * `courtier users reset-password`: the account with this email (in `cabinetId` when the email has
 * accounts in several cabinets), reset as an administrator would.
 */
export async function resetPasswordByEmail(
  deps: Deps,
  email: string,
  cabinetId: string | undefined,
  actor: AuditActor,
): Promise<{ user: CabinetUser; temporaryPassword: string }> {
  const accounts = tenancy.accountsOfEmail(deps, email);
  const matching = cabinetId === undefined ? accounts : accounts.filter((a) => a.cabinetId === cabinetId);
  const [account] = matching;
  if (account === undefined) {
    throw new ApiError(
      'not_found',
      cabinetId === undefined
        ? `No account with the email ${email} on this install.`
        : `No account with the email ${email} in the cabinet ${cabinetId}.`,
    );
  }
  if (matching.length > 1) {
    const list = matching.map((a) => `${a.cabinetId} (${a.cabinetName})`).join(', ');
    throw new ApiError('validation_error', `The email ${email} has accounts in several cabinets: say which, one of ${list}.`, {
      cabinets: matching.map((a) => a.cabinetId),
    });
  }
  return resetPassword(deps, account.cabinetId, account.userId, { actor });
}
