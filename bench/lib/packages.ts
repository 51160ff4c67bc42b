/** Where an installed package lives and its version, even when its "exports" hide package.json. */
import { readFileSync } from "node:fs";
import path from "node:path";

export function packageDir(name: string): string {
  const entry = require.resolve(name);
  const marker = `${path.sep}node_modules${path.sep}${name.split("/").join(path.sep)}${path.sep}`;
  const at = entry.lastIndexOf(marker);
  if (at < 0) throw new Error(`cannot find the folder of ${name} from ${entry}`);
  return entry.slice(0, at + marker.length - 1);
}

export function packageVersion(name: string): string {
  return (
    JSON.parse(readFileSync(path.join(packageDir(name), "package.json"), "utf8")) as {
      version: string;
    }
  ).version;
}
