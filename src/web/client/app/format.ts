/** Display helpers shared by the pages. */

export function formatNumber(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || Number.isNaN(n)) return "–";
  return n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "–";
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min ${s % 60} s`;
  return `${s} s`;
}

export function formatAgo(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "never";
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} days ago`;
}

export function formatDateTime(iso: string): string {
  const d = new Date(iso);
  return (
    d.toLocaleString("en-GB", {
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      timeZone: "UTC",
    }) + " UTC"
  );
}

export function formatPercent(share: number | null | undefined): string {
  if (share === null || share === undefined || Number.isNaN(share)) return "–";
  return `${(share * 100).toLocaleString("en-US", { maximumFractionDigits: 1 })} %`;
}

/** Distinct colours for the map timeline, told apart in light and dark (Okabe-Ito and Tableau hues). */
const MAP_PALETTE = [
  "#0072b2",
  "#e69f00",
  "#009e73",
  "#cc79a7",
  "#56b4e9",
  "#d55e00",
  "#8c6bb1",
  "#b8a000",
  "#7f7f7f",
  "#17becf",
];

/** Colours for the maps of one timeline, in order of first appearance, so neighbours never share one. */
export function mapColours(maps: readonly string[]): Map<string, string> {
  const colours = new Map<string, string>();
  for (const m of maps)
    if (!colours.has(m)) colours.set(m, MAP_PALETTE[colours.size % MAP_PALETTE.length] as string);
  return colours;
}

/** Regional-indicator flag for an ISO 3166-1 alpha-2 code, plus the code itself (screen readers read the code). */
export function countryLabel(code: string | null | undefined): string {
  if (!code || !/^[A-Za-z]{2}$/.test(code)) return "–";
  return code.toUpperCase();
}

export interface Range {
  key: string;
  label: string;
  seconds: number;
  /** The API's AUTO picks the resolution; the last hour of one server is read RAW (one point per crawl). */
  resolution: "AUTO" | "RAW";
}

const DAY_SECONDS = 24 * 3600;
const LAST_HOUR: Range = { key: "1h", label: "1 h", seconds: 3600, resolution: "RAW" };
const DAY: Range = { key: "24h", label: "24 h", seconds: DAY_SECONDS, resolution: "AUTO" };

/** Ranges of aggregates (rollups: an hour would be one point) ... */
export const AGGREGATE_RANGES: readonly Range[] = [
  DAY,
  { key: "7d", label: "7 days", seconds: 7 * DAY_SECONDS, resolution: "AUTO" },
  { key: "30d", label: "30 days", seconds: 30 * DAY_SECONDS, resolution: "AUTO" },
  { key: "1y", label: "1 year", seconds: 365 * DAY_SECONDS, resolution: "AUTO" },
];
/** ... and of one server, which also has its raw samples of the last hour. */
export const SERVER_RANGES: readonly Range[] = [LAST_HOUR, ...AGGREGATE_RANGES];

export const DEFAULT_RANGE = DAY.key;

export function rangeOf(key: string | null, ranges: readonly Range[]): Range {
  return ranges.find((r) => r.key === key) ?? DAY;
}

/** address:port, with an IPv6 address in brackets as clients expect it. */
export function hostPort(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}
