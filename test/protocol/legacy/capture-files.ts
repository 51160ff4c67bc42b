import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/** One capture of ../shared/captures/legacy (see its README for the fields). */
export interface LegacyCapture {
  id: string;
  protocol: string;
  game: string;
  request_hex: string[];
  packets_hex: string[];
  expected: Record<string, unknown> & { summary?: Record<string, unknown> };
  file: string;
}

export function loadLegacyCaptures(sharedDir: string): LegacyCapture[] {
  const dir = path.join(sharedDir, "captures", "legacy");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => ({
      ...(JSON.parse(readFileSync(path.join(dir, f), "utf8")) as Omit<LegacyCapture, "file">),
      file: f,
    }));
}

export function packetsOf(capture: LegacyCapture): Buffer[] {
  return capture.packets_hex.map((h) => Buffer.from(h, "hex"));
}
