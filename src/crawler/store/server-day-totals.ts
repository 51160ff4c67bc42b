/**
 * A server_day row's day totals as functions of its 24 hourly slots. The roll-up keeps the totals by difference
 * (history-store.ts) and falls back on these where a difference cannot say; tests and the roll-up bench hold
 * every row to them.
 */

/** The day totals, in server_day's column order. */
export const SERVER_DAY_TOTALS = [
  "samples",
  "online",
  "players_min",
  "players_max",
  "players_sum",
  "bots_max",
  "top_map",
] as const;

export type ServerDayTotal = (typeof SERVER_DAY_TOTALS)[number];

/**
 * SQL for one total computed from the slots; `slots(column)` is the SQL of that hourly array (`h_samples`, ...),
 * a column or an expression. Sums of no slot are 0, extremes of no slot NULL; the top map is the one with the
 * most online samples over the day (ties: the first by name), NULL when no slot has a map.
 */
export function totalFromSlots(total: ServerDayTotal, slots: (column: string) => string): string {
  switch (total) {
    case "samples":
      return `COALESCE((SELECT sum(x) FROM unnest(${slots("h_samples")}) x), 0)`;
    case "online":
      return `COALESCE((SELECT sum(x) FROM unnest(${slots("h_online")}) x), 0)`;
    case "players_min":
      return `(SELECT min(x) FROM unnest(${slots("h_players_min")}) x)`;
    case "players_max":
      return `(SELECT max(x) FROM unnest(${slots("h_players_max")}) x)`;
    case "players_sum":
      return `COALESCE((SELECT sum(x) FROM unnest(${slots("h_players_sum")}) x), 0)`;
    case "bots_max":
      return `(SELECT max(x) FROM unnest(${slots("h_bots_max")}) x)`;
    case "top_map":
      return `(SELECT m FROM unnest(${slots("h_map")}, ${slots("h_online")}) AS u(m, o) WHERE m IS NOT NULL
        GROUP BY m ORDER BY sum(o) DESC NULLS LAST, m LIMIT 1)`;
  }
}

/** How many server_day rows hold totals other than their slots' (`n`): 0 in a healthy index. */
export const SERVER_DAY_TOTALS_DRIFT_SQL = `
  SELECT count(*) AS n FROM server_day d
  WHERE (${SERVER_DAY_TOTALS.map((t) => `d.${t}`).join(", ")})
    IS DISTINCT FROM (${SERVER_DAY_TOTALS.map((t) => totalFromSlots(t, (c) => `d.${c}`)).join(", ")})`;
