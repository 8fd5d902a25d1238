/**
 * The last sync status the console knows, shared by whoever shows it (the shell's indicator on every
 * page, the Sync page): each fetches on its own timer, and what one learns the others show at once
 * (the indicator follows a pause made on the page without waiting for its next poll). Fetches are
 * numbered as they begin; an answer older than what is shown (a fetch begun before a pause's answer
 * arrived, or before a later fetch that was answered first) is dropped, rather than showing the
 * state before the pause until the next poll.
 */
interface StatusFeed<T> {
  /** Call before fetching; hand the number it gives to `offer` with the answer. */
  begin(): number;
  /** An answer to the fetch numbered `token`: shown unless what is shown is newer (begun or published after it). */
  offer(token: number, status: T): boolean;
  /** A status known to be current (an action's answer): always shown. */
  publish(status: T): void;
  /** Called with every status shown from now on, and at once with the last one if any; returns the unsubscribe. */
  subscribe(listener: (status: T) => void): () => void;
}

export function createStatusFeed<T>(): StatusFeed<T> {
  const listeners = new Set<(status: T) => void>();
  /** The number of the last fetch begun, and of what is shown (a published status takes a number too). */
  let begun = 0;
  let shown = 0;
  let last: { status: T } | null = null;
  const show = (number: number, status: T) => {
    shown = number;
    last = { status };
    for (const listener of [...listeners]) listener(status);
  };
  return {
    begin: () => ++begun,
    offer(token, status) {
      if (token <= shown) return false;
      show(token, status);
      return true;
    },
    publish: (status) => show(++begun, status),
    subscribe(listener) {
      listeners.add(listener);
      if (last) listener(last.status);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
