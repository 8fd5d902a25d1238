import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLanRequest } from './listener.js';

/**
 * On the office LAN listener (HTTPS), cookies are `__Host-` prefixed: browsers then take them only
 * with Secure, Path=/ and no Domain, so that no other host or plain-HTTP page of the office can
 * set or shadow them. On loopback they keep their plain names.
 */
function cookieName(request: FastifyRequest, name: string): string {
  return isLanRequest(request) ? `__Host-${name}` : name;
}

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  const wanted = cookieName(request, name);
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === wanted) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * SameSite=Lax always; Secure when the request arrived over https; HttpOnly unless the page's
 * script must read it (the CSRF token). Fastify sends one Set-Cookie line per call.
 */
export function setCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  name: string,
  value: string,
  options: { maxAgeSeconds: number; httpOnly: boolean },
): void {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  const httpOnly = options.httpOnly ? '; HttpOnly' : '';
  reply.header(
    'Set-Cookie',
    `${cookieName(request, name)}=${value}; Path=/${httpOnly}; SameSite=Lax; Max-Age=${options.maxAgeSeconds}${secure}`,
  );
}

export function clearCookie(request: FastifyRequest, reply: FastifyReply, name: string): void {
  setCookie(request, reply, name, '', { maxAgeSeconds: 0, httpOnly: true });
}
