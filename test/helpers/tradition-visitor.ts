import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/**
 * A browser-like visitor of the Mutuelle Tradition portal through `app.inject`: a cookie jar,
 * redirects followed, and forms posted with the __VIEWSTATE the page gave (as a browser would).
 */

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const decode = (html: string) => html.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e);
export const textOf = (html: string) =>
  decode(html.replace(/<[^>]+>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim();
export const h1Of = (html: string) => {
  const match = /<h1>([\s\S]*?)<\/h1>/.exec(html);
  return match?.[1] === undefined ? null : textOf(match[1]);
};
export const alertOf = (html: string) => {
  const match = /<div role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(html);
  return match?.[1] === undefined ? null : textOf(match[1]);
};
export const viewStateOf = (html: string) => /name="__VIEWSTATE" value="([^"]*)"/.exec(html)?.[1] ?? '';

export function traditionVisitor(app: FastifyInstance, prefix: string) {
  let cookie: string | undefined;
  let page = '';
  const url = (path: string) => (path.startsWith('/') ? path : `${prefix}/${path}`);
  async function send(method: 'GET' | 'POST', path: string, form?: Record<string, string>): Promise<LightMyRequestResponse> {
    const res = await app.inject({
      method,
      url: url(path),
      headers: { ...(cookie ? { cookie } : {}), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
    });
    const setCookie = res.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      cookie = /Max-Age=0/i.test(line) ? undefined : line.split(';')[0];
    }
    return res;
  }
  async function follow(res: LightMyRequestResponse): Promise<LightMyRequestResponse> {
    let current = res;
    for (let i = 0; i < 5 && current.statusCode >= 300 && current.statusCode < 400; i++)
      current = await send('GET', String(current.headers.location));
    if (current.headers['content-type']?.toString().startsWith('text/html')) page = current.body;
    return current;
  }
  return {
    /** GET, following redirects. */
    go: async (path: string) => follow(await send('GET', path)),
    /** POSTs the form of the last page shown, with its view state unless `viewState` says otherwise. */
    submit: async (path: string, form: Record<string, string>, viewState: string | null = viewStateOf(page)) =>
      follow(await send('POST', path, viewState === null ? form : { __VIEWSTATE: viewState, ...form })),
    get page() {
      return page;
    },
  };
}
