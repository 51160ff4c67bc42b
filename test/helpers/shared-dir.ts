import { existsSync } from "node:fs";
import path from "node:path";

/**
 * Where ../shared (captures, seeds) is: GSINDEX_SHARED_DIR, else the folder `shared` beside the
 * repository. null where it is absent (a user's fresh clone): tests that need it skip with a message.
 */
export function sharedDir(): string | null {
  const fromEnv = process.env.GSINDEX_SHARED_DIR;
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  const beside = path.resolve(__dirname, "..", "..", "..", "shared");
  return existsSync(beside) ? beside : null;
}

/** `describe` when the shared folder exists, else a skipped block that says why. */
export function describeWithShared(name: string, body: (dir: string) => void): void {
  const dir = sharedDir();
  if (dir === null) {
    describe.skip(`${name} (skipped: ../shared with the captures is not beside this checkout)`, () => {
      it("needs ../shared", () => undefined);
    });
    return;
  }
  describe(name, () => body(dir));
}
