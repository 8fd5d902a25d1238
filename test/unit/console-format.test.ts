import { describe, expect, it } from 'vitest';
import {
  formatClock,
  formatDate,
  formatDateTime,
  formatDateTimeSeconds,
  formatDay,
  formatEuros,
  formatNumber,
  formatTime,
} from '../../renderer/src/format.js';

/** One way per language for every page: French as France writes, English as Britain does. */
describe('the console’s dates and amounts', () => {
  // 09:26:31 UTC; the tests' time zone is the machine's, so only the shape of the time is checked.
  const iso = '2026-12-04T09:26:31Z';
  const nbsp = (s: string) => s.replace(/[\u00a0\u202f]/g, ' ');

  it('dates: the day, the month in words, the year; never 04/12/2026', () => {
    expect(formatDate('en', iso)).toBe('4 Dec 2026');
    expect(formatDate('fr', iso)).toBe('4 déc. 2026');
    expect(formatDateTime('en', iso)).toMatch(/^4 Dec 2026, \d{2}:\d{2}$/);
    expect(formatDateTime('fr', iso)).toMatch(/^4 déc\. 2026,? (à )?\d{2}:\d{2}$/);
    expect(formatDateTimeSeconds('en', iso)).toMatch(/^4 Dec 2026, \d{2}:\d{2}:31$/);
    expect(formatTime('fr', iso)).toMatch(/^\d{2}:\d{2}$/);
    expect(formatClock('en', iso)).toMatch(/^\d{2}:\d{2}:31$/);
  });

  it('a calendar day is that very day, written as dates are; numbers grouped per language', () => {
    expect(formatDay('en', '1984-03-09')).toBe('9 Mar 1984');
    expect(formatDay('fr', '1984-03-09')).toBe('9 mars 1984');
    expect(nbsp(formatNumber('fr', 12345.5))).toBe('12 345,5');
    expect(formatNumber('en', 12345.5)).toBe('12,345.5');
  });

  it('no date is a dash, not an error that blanks the page', () => {
    expect(formatDateTime('en', '')).toBe('—');
    expect(formatDate('fr', 'not a date')).toBe('—');
  });

  it('amounts: the euro sign after the number in French, before it in English', () => {
    expect(nbsp(formatEuros('fr', 1234.5))).toBe('1 234,50 €');
    expect(formatEuros('en', 1234.5)).toBe('€1,234.50');
    expect(nbsp(formatEuros('fr', 705.76))).toBe('705,76 €');
  });
});
