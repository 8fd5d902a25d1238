/** Times as the API writes them: ISO 8601 in UTC, to the millisecond. */

const DAY_MS = 86_400_000;
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the years toISOString writes with four digits. */
const FIRST_FOUR_DIGIT_MS = -62_167_219_200_000;
const LAST_FOUR_DIGIT_MS = 253_402_300_799_999;

const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * What `new Date(ms).toISOString()` writes, by arithmetic. Why: V8's toISOString formats through a
 * printf-like stream, and every record the API answers carries dates (a create writes three, a list
 * page fifty times that); without it, a page of the list and a create cost more (BENCHMARKS.md). Days become a civil date
 * by Howard Hinnant's `civil_from_days`. Times outside the four-digit years, and invalid ones, are
 * left to Date (which throws a RangeError for the latter).
 */
export function toIso(time: number): string {
  if (!(time >= FIRST_FOUR_DIGIT_MS && time <= LAST_FOUR_DIGIT_MS)) return new Date(time).toISOString();
  const ms = Math.trunc(time);
  const msOfDay = ((ms % DAY_MS) + DAY_MS) % DAY_MS;
  const shifted = (ms - msOfDay) / DAY_MS + 719_468; // days since 0000-03-01
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const milliseconds = msOfDay % 1000;
  return (
    `${String(year).padStart(4, '0')}-${twoDigits(month)}-${twoDigits(day)}T${twoDigits(Math.floor(msOfDay / 3_600_000))}:` +
    `${twoDigits(Math.floor(msOfDay / 60_000) % 60)}:${twoDigits(Math.floor(msOfDay / 1000) % 60)}.${String(milliseconds).padStart(3, '0')}Z`
  );
}

export function toIsoOrNull(ms: number | null): string | null {
  return ms === null ? null : toIso(ms);
}
