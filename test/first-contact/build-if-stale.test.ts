/**
 * `npm start` / `npm test` / `npm run demo` build only when the sources changed since the last build
 * (scripts/build-if-stale.js). Run here on a scratch project whose `build` script only counts its runs and
 * writes the outputs the real build leaves, so the test checks the decision, not tsc.
 */
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

jest.setTimeout(60_000);

const SCRIPT = path.resolve(__dirname, "..", "..", "scripts", "build-if-stale.js");
const FAKE_BUILD = [
  "const fs = require('fs');",
  "fs.appendFileSync('builds.txt', 'x');",
  "fs.mkdirSync('dist/cli', { recursive: true }); fs.writeFileSync('dist/cli/main.js', '');",
  "fs.mkdirSync('src/generated/prisma', { recursive: true }); fs.writeFileSync('src/generated/prisma/client.ts', '');",
].join(" ");

describe("build only when the sources changed", () => {
  let dir: string;
  const builds = (): number =>
    existsSync(path.join(dir, "builds.txt"))
      ? readFileSync(path.join(dir, "builds.txt"), "utf8").length
      : 0;
  const run = (...args: string[]): string => {
    const r = spawnSync(
      process.execPath,
      [path.join(dir, "scripts", "build-if-stale.js"), ...args],
      { cwd: dir, encoding: "utf8" },
    );
    expect(r.status).toBe(0);
    return r.stdout;
  };

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "gsindex-build-"));
    mkdirSync(path.join(dir, "scripts"));
    mkdirSync(path.join(dir, "src"));
    cpSync(SCRIPT, path.join(dir, "scripts", "build-if-stale.js"));
    writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({
        name: "scratch",
        private: true,
        scripts: { build: `node -e "${FAKE_BUILD}"` },
      }),
    );
    writeFileSync(path.join(dir, "src", "a.ts"), "export const a = 1;\n");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("builds the first time, then not again until a source changes", () => {
    expect(run()).toContain("building");
    expect(builds()).toBe(1);
    expect(run()).toContain("up to date");
    expect(builds()).toBe(1);

    writeFileSync(path.join(dir, "src", "a.ts"), "export const a = 2;\n");
    expect(run()).toContain("sources changed");
    expect(builds()).toBe(2);
    expect(run()).toContain("up to date");
    expect(builds()).toBe(2);
  });

  it("ignores the build's own outputs under src/ and rebuilds when an output is missing", () => {
    run();
    writeFileSync(path.join(dir, "src", "generated", "prisma", "client.ts"), "// regenerated\n");
    run();
    expect(builds()).toBe(1);
    rmSync(path.join(dir, "dist", "cli", "main.js"));
    run();
    expect(builds()).toBe(2);
  });

  it("--force builds whatever the stamp says", () => {
    run();
    run("--force");
    expect(builds()).toBe(2);
  });
});
