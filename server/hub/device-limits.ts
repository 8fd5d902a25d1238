import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { HubLimits } from './deps.js';

/**
 * What one device has in progress on this hub process: requests, and among them long polls. One
 * device (a stolen laptop among them) that opens hundreds of them would hold the hub's sockets,
 * memory and database connections for every cabinet; past its share it is told to retry. Counted
 * per process: a hub behind a load balancer gives a device that share on each of its processes.
 */
export function deviceConcurrency(limits: Pick<HubLimits, 'deviceRequests' | 'deviceLongPolls' | 'deviceUploads'>) {
  const requests = new Map<string, number>();
  const longPolls = new Map<string, number>();
  const uploads = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, by: number) => {
    const next = (map.get(key) ?? 0) + by;
    if (next <= 0) map.delete(key);
    else map.set(key, next);
    return next;
  };
  return {
    /** An onRequest hook, after the device check: counts the request until its response is sent or its connection closes. */
    admit(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
      const deviceId = request.device?.deviceId;
      if (deviceId === undefined) return done();
      const wait = Number((request.query as Record<string, unknown> | undefined)?.wait ?? 0);
      const longPoll = request.method === 'GET' && wait > 0;
      // A push or a PDF: a body of up to 8 or 20 MiB that the hub holds while it works on it.
      const upload = request.method === 'POST' || request.method === 'PUT';
      const full =
        (requests.get(deviceId) ?? 0) >= limits.deviceRequests
          ? `${limits.deviceRequests} requests`
          : longPoll && (longPolls.get(deviceId) ?? 0) >= limits.deviceLongPolls
            ? `${limits.deviceLongPolls} long polls`
            : upload && (uploads.get(deviceId) ?? 0) >= limits.deviceUploads
              ? `${limits.deviceUploads} uploads`
              : null;
      if (full) {
        return done(
          new ApiError('sync_too_many_requests', `This device has ${full} in progress on this hub already; retry in a moment.`, undefined, {
            'Retry-After': '1',
          }),
        );
      }
      add(requests, deviceId, 1);
      if (longPoll) add(longPolls, deviceId, 1);
      if (upload) add(uploads, deviceId, 1);
      reply.raw.once('close', () => {
        add(requests, deviceId, -1);
        if (longPoll) add(longPolls, deviceId, -1);
        if (upload) add(uploads, deviceId, -1);
      });
      done();
    },
  };
}
