/**
 * What a game server sends is untrusted text: PostgreSQL refuses NUL in text and jsonb, and jsonb
 * refuses lone UTF-16 surrogates. Strip the first and replace the second, so a hostile name can
 * never fail a batch write.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** What cleaning changes, a NUL or a lone surrogate: a string without one is kept as it is (no copy). */
const SUSPECT = new RegExp(`\\u0000|${LONE_SURROGATE.source}`);

export function cleanText(value: string): string;
export function cleanText(value: string | null | undefined): string | null;
export function cleanText(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (!SUSPECT.test(value)) return value;
  return value.replace(/\u0000/g, "").replace(LONE_SURROGATE, "\ufffd");
}

/** Whether any string (or key) in a JSON-able value has a NUL or a surrogate. */
function needsCleaning(value: unknown): boolean {
  if (typeof value === "string") return SUSPECT.test(value);
  if (Array.isArray(value)) return value.some(needsCleaning);
  if (value !== null && typeof value === "object") {
    // for-in over a plain JSON object (its own keys only): no array of entries for every object.
    const record = value as Record<string, unknown>;
    for (const k in record) if (SUSPECT.test(k) || needsCleaning(record[k])) return true;
  }
  return false;
}

/**
 * Deep-cleans every string in a JSON-able value. A value with nothing to clean (nearly every answer) is
 * returned as it is, not copied: the copy of each answer's player list and rules was garbage the crawler
 * made for every server (issue 14 item 2).
 */
export function cleanJson<T>(value: T): T {
  return needsCleaning(value) ? cleanCopy(value) : value;
}

function cleanCopy<T>(value: T): T {
  if (typeof value === "string") return cleanText(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => cleanCopy(v)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[cleanText(k)] = cleanCopy(v);
    return out as T;
  }
  return value;
}

export function clampInt(
  value: number | null | undefined,
  min: number,
  max: number,
): number | null {
  if (value === null || value === undefined || !Number.isFinite(value)) return null;
  return Math.max(min, Math.min(max, Math.trunc(value)));
}

export const SMALLINT_MAX = 32767;
export const INT_MAX = 2147483647;
