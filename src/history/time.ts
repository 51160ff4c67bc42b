/** UTC bucket boundaries of the history layout (docs/storage.md): raw partitions, hourly slots and days. */
export const HOUR_MS = 3600 * 1000;
export const DAY_MS = 24 * HOUR_MS;

export const floorHour = (at: Date): Date => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);

export function utcDay(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}
