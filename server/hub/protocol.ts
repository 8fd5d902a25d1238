import type { IncomingHttpHeaders } from 'node:http';
import { DEVICE_TIME_HEADER, MAX_CLOCK_AHEAD_MS, SYNC_PROTOCOL_HEADER } from '../../shared/sync-protocol.js';
import { ApiError } from '../errors.js';
import { validationError } from '../platform/http/validation.js';

/**
 * The version and clock rules every hub route applies to what an install says about itself.
 */

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * X-Courtier-Sync-Protocol: required, a whole number, and none this hub does not speak itself: a
 * cabinet's newest protocol rises with what its devices say, and one device saying a protocol from
 * the future would otherwise shut every other install of the cabinet out for good.
 */
export function readProtocol(headers: IncomingHttpHeaders, hubProtocol: number): number {
  const text = headerValue(headers, SYNC_PROTOCOL_HEADER)?.trim();
  if (text === undefined || !/^-?\d{1,9}$/.test(text)) {
    throw validationError([
      { path: 'header.X-Courtier-Sync-Protocol', message: 'required: the install’s sync protocol version, a whole number' },
    ]);
  }
  const protocol = Number(text);
  if (protocol > hubProtocol) {
    throw new ApiError(
      'sync_protocol_unsupported',
      `This install speaks sync protocol ${protocol}; this hub speaks up to ${hubProtocol}. Update the hub.`,
      {
        protocol,
        hub_protocol: hubProtocol,
      },
    );
  }
  return protocol;
}

/**
 * A cabinet's installs may be one protocol apart while they update one by one; an install two
 * versions behind the newest one seen would misread what the newer ones write.
 */
export function protocolRefusal(protocol: number, highest: number): ApiError | null {
  if (protocol >= 1 && protocol >= highest - 1) return null;
  return new ApiError(
    'sync_protocol_too_old',
    `This install speaks sync protocol ${protocol}; the cabinet’s other installs speak ${highest}. Update Courtier on this machine.`,
    {
      protocol,
      highest_protocol: highest,
    },
  );
}

export function assertProtocolServed(protocol: number, highest: number): void {
  const refusal = protocolRefusal(protocol, highest);
  if (refusal) throw refusal;
}

/** X-Courtier-Device-Time: optional, ms since the epoch. */
export function readDeviceTime(headers: IncomingHttpHeaders): number | null {
  const text = headerValue(headers, DEVICE_TIME_HEADER)?.trim();
  if (text === undefined || text === '') return null;
  if (!/^\d{1,15}$/.test(text))
    throw validationError([{ path: 'header.X-Courtier-Device-Time', message: 'ms since the epoch, a whole number' }]);
  return Number(text);
}

/**
 * A device whose clock runs ahead would stamp its edits with times that win over everyone's for as
 * long as it is ahead (last writer wins by HLC): refused before anything is stored.
 */
export function assertClockNotAhead(hubNow: number, deviceTimes: readonly number[]): void {
  const latest = Math.max(...deviceTimes);
  const ahead = latest - hubNow;
  if (ahead <= MAX_CLOCK_AHEAD_MS) return;
  throw new ApiError(
    'clock_skew',
    `This machine’s clock is ${Math.ceil(ahead / 1000)} s ahead of the hub’s (at most ${MAX_CLOCK_AHEAD_MS / 1000} s is accepted); set the clock right, the changes stay queued.`,
    { hub_time: new Date(hubNow).toISOString(), ahead_seconds: Math.ceil(ahead / 1000) },
  );
}
