import type { TestServer } from './server.js';

/** A small JSON client bound to one key, for tests that talk to the API as an integrator would. */
export function apiClient(server: TestServer, key: string) {
  async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await server.request(`/api/v1/public${path}`, {
      method,
      redirect: 'manual',
      headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    const json: unknown = text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
    return { status: res.status, headers: res.headers, body: json as Record<string, unknown> & { error?: string } };
  }
  return {
    call,
    get: (path: string) => call('GET', path),
    post: (path: string, body?: unknown, headers?: Record<string, string>) => call('POST', path, body, headers),
    patch: (path: string, body: unknown) => call('PATCH', path, body),
    delete: (path: string) => call('DELETE', path),
  };
}
