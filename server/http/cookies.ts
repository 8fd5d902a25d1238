import type { FastifyReply, FastifyRequest } from 'fastify';

export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** HttpOnly and SameSite=Lax always; Secure when the request arrived over https. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, name: string, value: string, maxAgeSeconds: number): void {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  reply.header('Set-Cookie', `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`);
}

export function clearCookie(request: FastifyRequest, reply: FastifyReply, name: string): void {
  setSessionCookie(request, reply, name, '', 0);
}
