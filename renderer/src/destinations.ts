import { CONSOLE_HOME } from '../../shared/console-pages.js';
import { OAUTH_PREFIX, isSafeReturnTo } from '../../shared/oauth.js';

/** Where the console goes once signed in, and where the consent form posts: pure rules, no DOM. */

/** `/.` or `/..` (also percent-encoded) as a whole path segment. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?#]|$)/i;

/** The server's redirect_to after a sign-in, followed only when it is a path on this origin. */
export function afterSignIn(redirectTo: string): string {
  return isSafeReturnTo(redirectTo) ? redirectTo : CONSOLE_HOME;
}

/**
 * The consent form's action: the server's decision_url, a path the form posts to the origin this
 * page came from (where the session cookie lives). Only a path under the OAuth prefix is accepted,
 * with no dot segment to lead it out of there.
 */
export function consentFormAction(decisionUrl: string): string | null {
  if (!decisionUrl.startsWith(`${OAUTH_PREFIX}/`) || !isSafeReturnTo(decisionUrl)) return null;
  return DOT_SEGMENT.test(decisionUrl) ? null : decisionUrl;
}
