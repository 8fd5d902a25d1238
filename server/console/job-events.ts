import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';
import { JOB_EVENT, READY_EVENT, streamJobEvents } from '../../shared/console-automation.js';
import { findConsoleJob, listUnfinishedConsoleJobs } from '../automation/console-jobs.js';
import type { Deps, JobChange } from '../deps.js';
import { readCookie } from '../platform/http/cookies.js';
import { registerEndpoint } from '../platform/http/endpoint.js';
import { consoleUser } from './guard.js';
import { findSignedInUser, SESSION_COOKIE } from './service.js';

/** A comment line every 15 s keeps proxies and the browser from closing an idle stream. */
const KEEP_ALIVE_MS = 15_000;
/** How long the browser waits before reconnecting after a drop. */
const RETRY_MS = 3_000;
/** A client that does not read (over 1 MiB waiting) is disconnected rather than buffered forever. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

interface Connection {
  cabinetId: string;
  res: ServerResponse;
  close(): void;
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * GET /api/v1/console/events: the console's live feed of its cabinet's jobs (Server-Sent Events).
 * Driven by deps.jobSignal — no timer per client but the keep-alive — each changed job is read and
 * serialised once per cabinet, then written to every open console of that cabinet. Streams end
 * when the client goes, when its session ends (checked at each keep-alive) and before the server
 * closes (so that close never waits on them).
 */
export function registerJobEvents(app: FastifyInstance, deps: Deps): void {
  const byCabinet = new Map<string, Set<Connection>>();

  const stopListening = deps.jobSignal.listen((changes) => deliver(changes));
  app.addHook('preClose', (done) => {
    stopListening();
    for (const connections of byCabinet.values()) for (const connection of connections) connection.close();
    done();
  });

  function deliver(changes: readonly JobChange[]): void {
    for (const change of changes) {
      const connections = byCabinet.get(change.cabinetId);
      if (!connections || connections.size === 0) continue;
      const job = findConsoleJob(deps, change.cabinetId, change.jobId);
      if (!job) continue;
      const text = frame(JOB_EVENT, job);
      for (const connection of connections) write(connection, text);
    }
  }

  function write(connection: Connection, text: string): void {
    if (connection.res.writableEnded || connection.res.destroyed) return;
    if (connection.res.writableLength > MAX_BUFFERED_BYTES) return connection.close();
    connection.res.write(text);
  }

  registerEndpoint(app, streamJobEvents, (request, reply) => {
    const user = consoleUser(request);
    // HEAD (Fastify answers it with this handler) gets the headers, not an endless stream.
    if (request.method === 'HEAD') return reply.type('text/event-stream; charset=utf-8').send();
    const token = readCookie(request, SESSION_COOKIE);
    const res = reply.raw;
    // The stream is written by hand; the headers set by earlier hooks (X-Request-Id, no-store…) go with it.
    reply.hijack();
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'Content-Type': 'text/event-stream; charset=utf-8',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });

    let closed = false;
    const connection: Connection = {
      cabinetId: user.cabinetId,
      res,
      close() {
        if (closed) return;
        closed = true;
        clearInterval(keepAlive);
        const set = byCabinet.get(user.cabinetId);
        set?.delete(connection);
        if (set?.size === 0) byCabinet.delete(user.cabinetId);
        if (res.writableEnded) return;
        if (res.destroyed) {
          // The client left: Fastify learns it from an 'error' on the response (it listens for
          // 'finish' and 'error'), so the request's log line is written as for any other request.
          const gone = Object.assign(new Error('The client closed the event stream.'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
          res.emit('error', gone);
        } else {
          res.end();
        }
      },
    };
    const keepAlive = setInterval(() => {
      if (!findSignedInUser(deps, token)) return connection.close();
      write(connection, ': keep-alive\n\n');
    }, KEEP_ALIVE_MS);
    keepAlive.unref();
    res.on('close', () => connection.close());
    res.on('error', () => connection.close());

    // Registered and snapshotted in the same turn: no change can fall between the two.
    const set = byCabinet.get(user.cabinetId) ?? new Set<Connection>();
    set.add(connection);
    byCabinet.set(user.cabinetId, set);
    const unfinished = listUnfinishedConsoleJobs(deps, user.cabinetId);
    let text = `retry: ${RETRY_MS}\n\n`;
    for (const job of unfinished.reverse()) text += frame(JOB_EVENT, job);
    text += frame(READY_EVENT, { unfinished: unfinished.map((j) => j.job_id) });
    write(connection, text);
    return reply;
  });
}
