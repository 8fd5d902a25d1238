import type { Hlc } from '../../shared/hlc.js';

/** The clock's state between two changes: the largest time seen and its counter. */
export interface ClockState {
  time: number;
  counter: number;
}

/** The counter has 6 digits on the wire; past them, the clock moves a millisecond on instead. */
const MAX_COUNTER = 999_999;

function bump(time: number, counter: number): ClockState {
  return counter > MAX_COUNTER ? { time: time + 1, counter: 0 } : { time, counter };
}

/**
 * A change made here: the wall clock if it moved on, else the same time with the next counter, so
 * that two changes of one device never share a clock and a wall clock set back never reorders them.
 */
export function tick(state: ClockState, now: number): ClockState {
  if (now > state.time) return { time: now, counter: 0 };
  return bump(state.time, state.counter + 1);
}

/**
 * A change received from another device: the clock moves past it, so that a later change made here
 * orders after what this install has already seen (the "happened before" of a hybrid clock).
 */
export function receive(state: ClockState, remote: Hlc, now: number): ClockState {
  const time = Math.max(state.time, remote.time, now);
  if (time === state.time && time === remote.time) return bump(time, Math.max(state.counter, remote.counter) + 1);
  if (time === state.time) return bump(time, state.counter + 1);
  if (time === remote.time) return bump(time, remote.counter + 1);
  return { time, counter: 0 };
}

/** The later of two clock states. */
export function later(a: ClockState, b: ClockState): ClockState {
  return a.time > b.time || (a.time === b.time && a.counter >= b.counter) ? a : b;
}
