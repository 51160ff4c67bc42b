/**
 * The real A2S captures (../shared/captures/a2s, or GSINDEX_SHARED_DIR/captures/a2s), read at run time
 * and never copied into the repository.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../lib/child";

export type CaptureKind = "info" | "players" | "rules";

export interface Capture {
  id: string;
  kind: CaptureKind;
  split: boolean;
  datagrams: Buffer[];
  appId?: number;
}

export function capturesDir(): string | null {
  const candidates = [
    process.env.GSINDEX_SHARED_DIR,
    path.resolve(repoRoot(), "..", "shared"),
  ].filter((d): d is string => d !== undefined && d !== "");
  for (const dir of candidates) {
    const a2s = path.join(dir, "captures", "a2s");
    if (existsSync(a2s)) return a2s;
  }
  return null;
}

interface CaptureFile {
  id: string;
  kind: string;
  framing: { split: boolean };
  packets_hex: string[];
  context?: { appId?: number };
  expected?: { truncated?: boolean };
}

/** Every info/players/rules capture (malformed, challenge and ping cases are left out). */
export function loadCaptures(dir: string): Capture[] {
  const out: Capture[] = [];
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()) {
    const c = JSON.parse(readFileSync(path.join(dir, name), "utf8")) as CaptureFile;
    if (c.kind !== "info" && c.kind !== "players" && c.kind !== "rules") continue;
    const capture: Capture = {
      id: c.id,
      kind: c.kind,
      split: c.framing.split,
      datagrams: c.packets_hex.map((h) => Buffer.from(h, "hex")),
    };
    if (c.context?.appId !== undefined) capture.appId = c.context.appId;
    out.push(capture);
  }
  return out;
}
