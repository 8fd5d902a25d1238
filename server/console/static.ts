import { readFile, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { CONSOLE_HOME, getConsoleAsset, openConsolePage, openConsoleWithoutSlash, openRoot } from '../../shared/console-pages.js';
import { ApiError } from '../errors.js';
import { registerEndpoint } from '../platform/http/endpoint.js';

export interface ConsoleRoutesOptions {
  /** The Vite build of renderer/: index.html and assets/ (dist/renderer). */
  rootDir: string;
}

/**
 * The console's policy. form-action: Chromium checks it on the redirects that follow a form post
 * too, and the consent form's 303 goes to the client's redirect URI (https, or http on loopback at
 * any port, the only kinds registration accepts), so 'self' alone would block every consent.
 */
export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self' http: https:; frame-ancestors 'none'; base-uri 'none'";

/**
 * Referrer-Policy same-origin, not no-referrer: under no-referrer, Chromium sends `Origin: null` with
 * a form post (the Fetch standard's rule for non-CORS requests), and the local guard refuses the
 * consent form as cross-origin. same-origin keeps the real Origin on our own posts and sends no
 * Referer at all to another origin (the client's redirect URI included).
 */
const HTML_HEADERS = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
} as const;

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
};

const ASSETS_PREFIX = '/console/assets/';
/** What Vite names its output: `name-hash.ext`, possibly in sub-folders. No dot segments, no escapes. */
const ASSET_PATH = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Courtier console not built</title></head>
<body><h1>The Courtier console is not built</h1>
<p>Run <code>npm run build</code> in the Courtier folder, then reload this page.</p>
<p lang="fr">La console Courtier n’est pas construite : lancez <code>npm run build</code> dans le dossier de Courtier, puis rechargez la page.</p>
</body></html>
`;

/** The path of a request, without its query string, exactly as sent (still percent-encoded). */
function rawPath(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * The file under assets/ that a request path names, or null when it names none safely: only
 * Vite-like names (letters, digits, `.`, `_`, `-`, `/` between segments), so `..`, `%2f`, `%5c`,
 * backslashes, NUL and absolute paths never reach the file system; the resolved path is checked
 * to stay inside the folder all the same.
 */
export function assetFile(assetsDir: string, requestPath: string): string | null {
  if (!requestPath.startsWith(ASSETS_PREFIX)) return null;
  const relative = requestPath.slice(ASSETS_PREFIX.length);
  if (!ASSET_PATH.test(relative)) return null;
  if (relative.split('/').some((segment) => segment === '.' || segment === '..')) return null;
  const file = resolve(assetsDir, relative);
  return file.startsWith(assetsDir + sep) ? file : null;
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}

/**
 * The console: `/` and `/console` lead to `/console/`; `/console/assets/*` are Vite's hashed files
 * (cached for a year); every other `/console/*` path is index.html, and the page picks itself from
 * the path. Nothing outside /console/ is answered here but `/`.
 */
export async function consoleRoutes(app: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const rootDir = resolve(options.rootDir);
  const assetsDir = join(rootDir, 'assets');
  const indexFile = join(rootDir, 'index.html');

  async function sendIndex(reply: FastifyReply): Promise<FastifyReply> {
    reply.headers(HTML_HEADERS).type('text/html; charset=utf-8');
    let html: Buffer;
    try {
      // Read each time: a rebuild while the service runs is picked up, and the file is small.
      html = await readFile(indexFile);
    } catch (err) {
      if (!isMissing(err)) throw err;
      return reply.code(503).send(NOT_BUILT_PAGE);
    }
    return reply.send(html);
  }

  registerEndpoint(app, openRoot, (_request, reply) => reply.redirect(CONSOLE_HOME, 302));

  registerEndpoint(app, openConsoleWithoutSlash, (request, reply) => {
    const q = request.url.indexOf('?');
    return reply.redirect(`/console/${q === -1 ? '' : request.url.slice(q)}`, 308);
  });

  registerEndpoint(app, getConsoleAsset, async (request, reply) => {
    const file = assetFile(assetsDir, rawPath(request.url));
    if (file === null) throw new ApiError('not_found', 'No such console file.');
    let body: Buffer;
    try {
      if (!(await stat(file)).isFile()) throw new ApiError('not_found', 'No such console file.');
      body = await readFile(file);
    } catch (err) {
      if (isMissing(err)) throw new ApiError('not_found', 'No such console file.');
      throw err;
    }
    return reply
      .type(CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream')
      .header('Cache-Control', 'public, max-age=31536000, immutable')
      .header('X-Content-Type-Options', 'nosniff')
      .send(body);
  });

  // The single-page fallback: the path is never used to read a file.
  registerEndpoint(app, openConsolePage, (_request, reply) => sendIndex(reply));
}
