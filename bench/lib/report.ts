/**
 * What every benchmark part hands back: a markdown section for docs/BENCHMARKS.md (figures with their
 * targets beside them) and a machine-readable summary that main.ts also writes to bench/out/.
 */
export interface PartResult {
  /** Part id used by --only: query, decode, crawl, storage, api, web. */
  id: string;
  title: string;
  /** Markdown body of the section (no heading). */
  markdown: string;
  /** Commands a reader can run to repeat this part. */
  commands: string[];
  /** One line per target: met or missed, and by how much. */
  verdicts: Verdict[];
  data: unknown;
  wallMs: number;
}

export interface Verdict {
  what: string;
  target: string;
  measured: string;
  met: boolean | null;
  /** For a missed target: by how much (e.g. "needs 1.3x more"). */
  gap?: string;
}

/** A markdown table; cells are written as given. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>): string =>
    `| ${cells.map((c) => String(c)).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** 12345.6 -> "12,346"; small numbers keep `digits` decimals. */
export function num(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return String(value);
  return value.toLocaleString("en-US", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

export function mib(bytes: number): string {
  return `${num(bytes / (1024 * 1024), 1)} MiB`;
}

export function seconds(ms: number, digits = 2): string {
  return `${num(ms / 1000, digits)} s`;
}

/** "3.4x" */
export function ratio(a: number, b: number): string {
  if (!(b > 0)) return "n/a";
  return `${num(a / b, 2)}x`;
}

export function verdictText(v: Verdict): string {
  if (v.met === null) return "not measured";
  return v.met ? "met" : `**missed**${v.gap ? ` (${v.gap})` : ""}`;
}
