/**
 * What a game server sends is untrusted text: PostgreSQL refuses NUL in text and jsonb, and jsonb
 * refuses lone UTF-16 surrogates. Strip the first and replace the second, so a hostile name can
 * never fail a batch write.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function cleanText(value: string): string;
export function cleanText(value: string | null | undefined): string | null;
export function cleanText(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return value.replace(/\u0000/g, "").replace(LONE_SURROGATE, "\ufffd");
}

/** Deep-cleans every string in a JSON-able value. */
export function cleanJson<T>(value: T): T {
  if (typeof value === "string") return cleanText(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => cleanJson(v)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[cleanText(k)] = cleanJson(v);
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
