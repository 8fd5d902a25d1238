import type { FastifyReply, FastifyRequest } from 'fastify';
import { createState, type PortalState, type Session, type TraditionAccount, type TraditionLimits } from './state.js';

/** What every page group of the portal shares: its state, its answers and the session check. */
export interface TraditionPortal {
  base: string;
  clock: { now(): number };
  randomBytes: (size: number) => Buffer;
  accounts: ReadonlyMap<string, TraditionAccount>;
  state: PortalState;
  redesigned(): boolean;
  /** The quote's PDF is ready after this many refreshes of its page, or this long after pricing. */
  pdf: { afterRefreshes: number; afterMs: number };
  limits?: Partial<TraditionLimits>;
  html(reply: FastifyReply, status: number, html: string): FastifyReply;
  redirect(reply: FastifyReply, path: string): FastifyReply;
  /** The preHandler of signed-in pages: anyone else goes to the login (or to the captcha). */
  requireSession(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
  sessionOf(request: FastifyRequest): Session;
}

export function createTraditionPortal(
  options: Omit<TraditionPortal, 'state' | 'html' | 'redirect' | 'requireSession' | 'sessionOf'>,
): TraditionPortal {
  const state = createState(options);
  const signedIn = new WeakMap<FastifyRequest, Session>();
  const redirect = (reply: FastifyReply, path: string) => reply.redirect(`${options.base}/${path}`, 303);
  return {
    ...options,
    state,
    html: (reply, status, html) => reply.code(status).type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(html),
    redirect,
    async requireSession(request, reply) {
      const { session, expired } = state.currentSession(request);
      if (!session) {
        if (expired) state.endSession(reply, undefined);
        return redirect(reply, expired ? 'login?motif=expiration' : 'login');
      }
      if (session.stage === 'captcha') return redirect(reply, 'controle');
      signedIn.set(request, session);
      return undefined;
    },
    sessionOf(request) {
      const session = signedIn.get(request);
      // A programming error (a signed-in page registered without the hook): a 500.
      if (!session) throw new Error('sessionOf() called on a page without the requireSession hook');
      return session;
    },
  };
}
