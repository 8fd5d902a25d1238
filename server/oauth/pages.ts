import type { FastifyReply } from 'fastify';
import { escapeHtml } from '../platform/http/html.js';

/** Pages a person sees in the browser during authorization; never framed, never cached. */
const BROWSER_PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
} as const;

export function sendBrowserPage(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Courtier</title>
<style>body{font-family:system-ui,sans-serif;background:#f4f6f8;color:#1b1b1b;margin:0}main{max-width:36rem;margin:4rem auto;background:#fff;padding:1.5rem 2rem;border-radius:6px}h1{font-size:1.3rem}[role=alert]{border-left:4px solid #b00020;background:#fde8eb;padding:.6rem 1rem}</style>
</head><body><main><h1>${escapeHtml(title)}</h1><p role="alert">${escapeHtml(message)}</p><p><a href="/console/">Courtier console</a></p></main></body></html>`;
  return reply.code(status).headers(BROWSER_PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
}
