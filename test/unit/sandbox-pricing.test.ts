import { describe, expect, it } from 'vitest';
import { parseEuros } from '@courtier/adapter-kit';
import {
  autoPremium,
  formatEuros,
  fullYearsSince,
  homePremium,
  isYoungDriver,
  roundToCents,
  zoneFactor,
} from '../../server/sandbox-portals/sandbox/pricing.js';
import { isValidIsoDate } from '../../server/sandbox-portals/sandbox/validation.js';

const ON = Date.UTC(2026, 10, 22, 9); // 2026-11-22
const DRIVER = {
  driverBirthDate: '1980-05-14',
  licenceDate: '2000-06-01',
  bonusMalus: 1,
  postcode: '45000',
  usage: 'prive',
  formula: 'tiers',
} as const;

describe('sandbox tariff', () => {
  it('auto: 380 × bonus-malus × young × usage × formula × zone', () => {
    expect(autoPremium(DRIVER, ON)).toBe(380);
    expect(autoPremium({ ...DRIVER, bonusMalus: 0.5 }, ON)).toBe(190);
    expect(autoPremium({ ...DRIVER, formula: 'tiers_etendu' }, ON)).toBe(513);
    expect(autoPremium({ ...DRIVER, formula: 'tous_risques' }, ON)).toBe(722);
    expect(autoPremium({ ...DRIVER, usage: 'mixte' }, ON)).toBe(437);
    expect(autoPremium({ ...DRIVER, usage: 'professionnel' }, ON)).toBe(494);
    expect(autoPremium({ ...DRIVER, postcode: '75011' }, ON)).toBe(494);
    expect(autoPremium({ ...DRIVER, bonusMalus: 0.85, formula: 'tous_risques', postcode: '69003' }, ON)).toBe(705.76);
  });

  it('young driver: under 25, or licence held under 3 full years, on the day of the quote', () => {
    expect(isYoungDriver({ driverBirthDate: '2001-11-23', licenceDate: '2020-01-01' }, ON)).toBe(true); // 24 until tomorrow
    expect(isYoungDriver({ driverBirthDate: '2001-11-22', licenceDate: '2020-01-01' }, ON)).toBe(false); // 25 today
    expect(isYoungDriver({ driverBirthDate: '1970-01-01', licenceDate: '2023-11-23' }, ON)).toBe(true);
    expect(isYoungDriver({ driverBirthDate: '1970-01-01', licenceDate: '2023-11-22' }, ON)).toBe(false);
    expect(autoPremium({ ...DRIVER, licenceDate: '2025-01-01' }, ON)).toBe(608);
  });

  it('home: (m² × rate + rooms × 9 + capital × 0.45 %) × occupant × zone', () => {
    const flat = {
      dwellingType: 'appartement',
      surfaceM2: 62,
      rooms: 3,
      postcode: '75011',
      occupantStatus: 'locataire',
      contentsCapitalEur: 15000,
    } as const;
    expect(homePremium(flat)).toBe(235.69);
    expect(homePremium({ ...flat, postcode: '45000' })).toBe(181.3);
    expect(homePremium({ ...flat, postcode: '45000', occupantStatus: 'proprietaire' })).toBe(226.63); // 226.625 half-up
    expect(homePremium({ ...flat, postcode: '45000', dwellingType: 'maison' })).toBe(212.3);
  });

  it('zones by département', () => {
    expect(['75001', '92100', '93200', '94300'].map(zoneFactor)).toEqual([1.3, 1.3, 1.3, 1.3]);
    expect(['06000', '13001', '31000', '33000', '69003'].map(zoneFactor)).toEqual([1.15, 1.15, 1.15, 1.15, 1.15]);
    expect(['20000', '97400', '45000'].map(zoneFactor)).toEqual([1.1, 1.1, 1]);
  });

  it('rounds half-up to the cent despite float noise', () => {
    expect(roundToCents(208.495)).toBe(208.5);
    expect(roundToCents(1.005)).toBe(1.01);
    expect(roundToCents(705.755)).toBe(705.76);
    expect(roundToCents(0.1 + 0.2)).toBe(0.3);
  });

  it('formats euros the French way, and the robot parses them back', () => {
    expect(formatEuros(612.4)).toBe('612,40\u00a0€');
    expect(formatEuros(1387.15)).toBe('1\u00a0387,15\u00a0€');
    expect(formatEuros(1234567)).toBe('1\u00a0234\u00a0567,00\u00a0€');
    for (const amount of [0, 0.05, 612.4, 1387.15, 1234567.89]) expect(parseEuros(formatEuros(amount))).toBe(amount);
    expect(parseEuros('1\u202f387,15\u00a0€')).toBe(1387.15);
    expect(parseEuros('612 €')).toBe(612);
    expect(parseEuros('sur devis')).toBeNull();
    expect(parseEuros('1.387,15 €')).toBeNull();
  });

  it('counts whole years and checks dates', () => {
    expect(fullYearsSince('2000-02-29', Date.UTC(2026, 1, 28))).toBe(25);
    expect(fullYearsSince('2000-02-29', Date.UTC(2026, 2, 1))).toBe(26);
    expect(isValidIsoDate('2024-02-29')).toBe(true);
    expect(isValidIsoDate('2023-02-29')).toBe(false);
    expect(isValidIsoDate('1899-12-31')).toBe(false);
    expect(isValidIsoDate('22/11/2026')).toBe(false);
  });
});
