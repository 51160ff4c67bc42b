import { existsSync, readdirSync, symlinkSync } from "node:fs";
import path from "node:path";

/** Fills `dir` with links to every program on the PATH except Redis's: the PATH of a machine without Redis. */
export function pathWithoutRedis(dir: string): string {
  for (const folder of (process.env.PATH ?? "").split(path.delimiter)) {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      if (name.startsWith("redis-") || existsSync(path.join(dir, name))) continue;
      symlinkSync(path.join(folder, name), path.join(dir, name));
    }
  }
  return dir;
}
