import { describe, expect, it } from 'vitest';
import { createAfterCommitSignal, type SignalTimer } from '../../server/platform/after-commit-signal.js';

/** A timer the test moves: `after` runs when `advance` passes its time. */
function manualTimer(): SignalTimer & { advance(ms: number): void; pending(): number } {
  let now = 1_000;
  let due: { at: number; run: () => void }[] = [];
  return {
    now: () => now,
    after: (ms, run) => void due.push({ at: now + ms, run }),
    advance(ms) {
      now += ms;
      const ready = due.filter((d) => d.at <= now);
      due = due.filter((d) => d.at > now);
      for (const d of ready) d.run();
    },
    pending: () => due.length,
  };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('after-commit signal', () => {
  it('coalesces the notifications of one turn into one call, on the next turn', async () => {
    const signal = createAfterCommitSignal();
    let calls = 0;
    signal.listen(() => calls++);
    signal.notify();
    signal.notify();
    expect(calls).toBe(0);
    await nextTurn();
    expect(calls).toBe(1);
    signal.notify();
    await nextTurn();
    expect(calls).toBe(2);
  });

  it('with a minimum interval: at once after a quiet spell, then at most once per interval, every notification meanwhile joined', async () => {
    const timer = manualTimer();
    const signal = createAfterCommitSignal({ minIntervalMs: 10, timer });
    let calls = 0;
    signal.listen(() => calls++);
    signal.notify();
    await nextTurn();
    expect(calls).toBe(1);
    // Soon after a run: waits for the rest of the interval, whatever comes meanwhile.
    timer.advance(3);
    signal.notify();
    signal.notify();
    await nextTurn();
    expect(calls).toBe(1);
    expect(timer.pending()).toBe(1);
    timer.advance(6);
    expect(calls).toBe(1);
    timer.advance(1);
    expect(calls).toBe(2);
    // After a quiet spell longer than the interval: the next turn again.
    timer.advance(50);
    signal.notify();
    await nextTurn();
    expect(calls).toBe(3);
    expect(timer.pending()).toBe(0);
  });

  it('does nothing without listeners, and a listener removed is not called', async () => {
    const signal = createAfterCommitSignal();
    let calls = 0;
    signal.notify();
    const unlisten = signal.listen(() => calls++);
    unlisten();
    signal.notify();
    await nextTurn();
    expect(calls).toBe(0);
  });
});
