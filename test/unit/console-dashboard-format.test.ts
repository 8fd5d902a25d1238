import { describe, expect, it } from 'vitest';
import { formatNumber as formatCount } from '../../renderer/src/format.js';
import { formatChartDay as formatDay, formatRate, formatSeconds } from '../../renderer/src/pages/automation/dashboardStrings.js';

/** The dashboard's figures as each language writes them; Intl's narrow and plain no-break spaces are read as spaces. */
const plain = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

describe('the dashboard’s numbers, per language', () => {
  it('seconds with one decimal at most, grouped as the language groups thousands', () => {
    expect(plain(formatSeconds('fr', 1234.5))).toBe('1 234,5 s');
    expect(plain(formatSeconds('en', 1234.5))).toBe('1,234.5 s');
    expect(plain(formatSeconds('en', 7))).toBe('7 s');
    expect(formatSeconds('fr', null)).toBe('—');
  });

  it('rates as whole percentages, the French with its space', () => {
    expect(plain(formatRate('fr', 0.7))).toBe('70 %');
    expect(formatRate('en', 0.7)).toBe('70%');
    expect(formatRate('en', 4 / 7)).toBe('57%');
    expect(formatRate('en', null)).toBe('—');
  });

  it('counts and UTC days', () => {
    expect(plain(formatCount('fr', 12345))).toBe('12 345');
    expect(formatCount('en', 12345)).toBe('12,345');
    expect(formatDay('fr', '2026-11-20')).toBe('20 nov.');
    expect(formatDay('en', '2026-11-20')).toBe('20 Nov');
  });
});
