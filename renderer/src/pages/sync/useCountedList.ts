import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApiFailure } from '../../api.js';

/**
 * A list the Sync page reads again when its count in the status moves, and after an action:
 * `reload` gives back the list it read (null when it failed), for the action to word its outcome
 * with. None left needs no request: the count comes from the status, read every few seconds anyway.
 */
export function useCountedList<T>(count: number, read: () => Promise<{ ok: true; data: { data: T[] } } | ApiFailure>) {
  const [list, setList] = useState<T[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The number of the last read begun: an older answer arriving late must not replace a newer one. */
  const latest = useRef(0);
  const reload = useCallback(async (): Promise<T[] | null> => {
    const mine = ++latest.current;
    const result = await read();
    const got = result.ok ? result.data.data : null;
    if (mine !== latest.current) return got;
    setError(result.ok ? null : result.error.message);
    if (got !== null) setList(got);
    return got;
  }, [read]);
  useEffect(() => {
    if (count === 0) setList([]);
    else void reload();
    return () => {
      latest.current += 1;
    };
  }, [count, reload]);
  return { list, error, reload };
}
