import { z } from 'zod';

/**
 * The sync's hybrid logical clock: `<wall ms, 15 digits>-<counter, 6 digits>-<device id>`. Its text
 * order is its order (time, then counter, then device), so the hub and the installs compare strings.
 */

const HLC_PATTERN = /^(\d{15})-(\d{6})-([0-9a-z-]{1,64})$/;
export const hlcSchema = z.string().regex(HLC_PATTERN, 'a hybrid logical clock: 15-digit ms, 6-digit counter, device id');

export interface Hlc {
  time: number;
  counter: number;
  device: string;
}

export function formatHlc(hlc: Hlc): string {
  return `${String(hlc.time).padStart(15, '0')}-${String(hlc.counter).padStart(6, '0')}-${hlc.device}`;
}

export function parseHlc(text: string): Hlc {
  const match = HLC_PATTERN.exec(text);
  if (!match) throw new Error(`not a hybrid logical clock: ${text}`);
  return { time: Number(match[1]), counter: Number(match[2]), device: match[3] as string };
}
