import { createHook } from 'node:async_hooks';

/** Where the held entry lives: on `process`, because the problem it answers is the process's. */
const HELD_ENTRY = Symbol.for('courtier.nextTickEntry');

/**
 * Keeps one of `process.nextTick`'s queue entries alive for the life of the process (once per
 * process; later calls do nothing).
 *
 * Why: Node 20 builds each nextTick entry as an object literal with symbol keys, and V8 records
 * weakly, at each key, the hidden class (map) the entry has there. When those maps are collected
 * (a GC while no entry is alive: seen in the service during its first password hash), the next
 * entry gets new ones, and V8 marks the sites megamorphic for good. From then on every nextTick
 * defines its four properties through V8's runtime, and Node's own http and stream code calls
 * nextTick many times per request. Under callgrind, a large share of a `GET /me`'s main-thread
 * instructions goes there (with the entry held, none). An entry that stays alive keeps its maps,
 * and the sites stay monomorphic.
 *
 * The entry is caught through an async hook enabled only for one nextTick call.
 */
export function holdNextTickShape(): void {
  if (Object.hasOwn(process, HELD_ENTRY)) return;
  let entry: object | undefined;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') entry ??= resource;
    },
  });
  hook.enable();
  try {
    // With an argument, as Node's internals mostly call it: the entry's `args` field holds an array.
    process.nextTick((_held: undefined) => undefined, undefined);
  } finally {
    hook.disable();
  }
  Object.defineProperty(process, HELD_ENTRY, { value: entry, enumerable: false });
}
