import { describe, expect, it } from 'vitest';
import { createLoginThrottle } from '../../server/console/service.js';
import { throttleBucket } from '../../server/platform/http/client-address.js';
import { testClock } from '../helpers/server.js';

describe('throttle buckets', () => {
  it('an IPv4 address is its own bucket; an IPv6 address counts by its /64, whatever its spelling; an IPv4 client seen in IPv6 is its IPv4 address', () => {
    expect(throttleBucket('192.0.2.7')).toBe('192.0.2.7');
    expect(throttleBucket('2001:db8:1:2:abcd::1')).toBe('2001:db8:1:2::/64');
    expect(throttleBucket('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(throttleBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(throttleBucket('fe80::1')).toBe('fe80:0:0:0::/64');
    expect(throttleBucket('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(throttleBucket('::1')).toBe('0:0:0:0::/64');
    expect(throttleBucket('not an address')).toBe('not an address');
  });
});

describe('the sign-in throttle', () => {
  const lan = (address: string) => ({ address, local: false });
  const here = { address: '127.0.0.1', local: true };

  it('an account locked by failures from the network still signs in from this machine', () => {
    const throttle = createLoginThrottle(testClock(Date.now()));
    for (let i = 0; i < 5; i++) throttle.recordFailure('admin@cabinet.fr', lan(`192.0.2.${i}`));
    expect(throttle.retryAfter('admin@cabinet.fr', lan('192.0.2.99'))).toBeGreaterThan(0);
    expect(throttle.retryAfter('admin@cabinet.fr', here)).toBe(0);
    // And the other way round: failures at the machine lock the machine, not the network.
    for (let i = 0; i < 5; i++) throttle.recordFailure('other@cabinet.fr', here);
    expect(throttle.retryAfter('other@cabinet.fr', here)).toBeGreaterThan(0);
    expect(throttle.retryAfter('other@cabinet.fr', lan('192.0.2.1'))).toBe(0);
  });

  it('an address is limited alone; an IPv6 /64 as a whole too, with a higher limit: rotating addresses does not start afresh, and one colleague does not shut out the office', () => {
    const throttle = createLoginThrottle(testClock(Date.now()));
    for (let i = 0; i < 20; i++) throttle.recordFailure(`guess-${i}@x.fr`, lan('2001:db8:1:2::aa'));
    expect(throttle.limitedAddress('2001:db8:1:2::aa')).toEqual({ key: '2001:db8:1:2::aa', count: 20 });
    // A colleague on the same /64 still signs in.
    expect(throttle.limitedAddress('2001:db8:1:2::bb')).toBeNull();
    expect(throttle.retryAfter('colleague@x.fr', lan('2001:db8:1:2::bb'))).toBe(0);
    // Rotating addresses in the /64: past 100 failures of the network, the whole /64 waits.
    for (let i = 0; i < 80; i++) throttle.recordFailure(`guess-${i}@x.fr`, lan(`2001:db8:1:2::${(i + 0x100).toString(16)}`));
    expect(throttle.limitedAddress('2001:db8:1:2:dead:beef:0:1')).toEqual({ key: '2001:db8:1:2::/64', count: 100 });
    expect(throttle.retryAfter('someone@x.fr', lan('2001:db8:1:2::ffff'))).toBeGreaterThan(0);
    expect(throttle.limitedAddress('2001:db8:1:3::1')).toBeNull();
    // IPv4 counts once per failure, by the address.
    for (let i = 0; i < 19; i++) throttle.recordFailure(`v4-${i}@x.fr`, lan('192.0.2.5'));
    expect(throttle.limitedAddress('192.0.2.5')).toBeNull();
    throttle.recordFailure('v4@x.fr', lan('192.0.2.5'));
    expect(throttle.limitedAddress('192.0.2.5')).toEqual({ key: '192.0.2.5', count: 20 });
  });
});
