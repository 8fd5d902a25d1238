import { useEffect, useState } from 'react';
import {
  consoleJobSchema,
  JOB_EVENT,
  READY_EVENT,
  readyEventSchema,
  streamJobEvents,
  type ConsoleJob,
} from '../../../../shared/console-automation.js';
import { pathTo } from '../../../../shared/endpoint.js';
import { checkReachable } from '../../reachability.js';

/**
 * The page's one connection to the live feed (streamJobEvents, Server-Sent Events),
 * shared by the jobs page and the MFA prompt: opened by the first subscriber, closed with the last.
 * EventSource reconnects by itself after a drop (the server sends `retry:`); on each (re)connection
 * the server sends the unfinished jobs, then `ready` with their ids.
 */
export interface FeedListener {
  job?(job: ConsoleJob): void;
  ready?(unfinished: readonly string[]): void;
  connection?(live: boolean): void;
}

const listeners = new Set<FeedListener>();
let source: EventSource | null = null;
let live = false;

function setLive(next: boolean): void {
  live = next;
  for (const l of listeners) l.connection?.(next);
}

function open(): void {
  source = new EventSource(pathTo(streamJobEvents));
  source.addEventListener(JOB_EVENT, (event) => {
    const parsed = consoleJobSchema.safeParse(JSON.parse((event as MessageEvent<string>).data));
    if (!parsed.success) return;
    for (const l of listeners) l.job?.(parsed.data);
  });
  source.addEventListener(READY_EVENT, (event) => {
    const parsed = readyEventSchema.safeParse(JSON.parse((event as MessageEvent<string>).data));
    if (!parsed.success) return;
    setLive(true);
    for (const l of listeners) l.ready?.(parsed.data.unfinished);
  });
  source.addEventListener('error', () => {
    setLive(false);
    checkReachable();
  });
}

export function subscribeToJobs(listener: FeedListener): () => void {
  listeners.add(listener);
  if (!source) open();
  else listener.connection?.(live);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && source) {
      source.close();
      source = null;
      live = false;
    }
  };
}

/** Whether the feed is connected, for a "live" badge. */
export function useFeedLive(): boolean {
  const [state, setState] = useState(live);
  useEffect(() => subscribeToJobs({ connection: setState }), []);
  return state;
}
