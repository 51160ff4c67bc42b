#!/usr/bin/env node
"use strict";
// `npm run build` only when what it builds from changed since the last build: `npm start`, `npm test` and
// `npm run demo` call this, so a restart takes seconds instead of a full Prisma generate + tsc (and the
// first start after `npm ci`, whose `prepare` already built, does not build twice). The inputs are hashed by
// content, not mtime: a `git checkout` touches mtimes without changing anything. `--force` always builds.
const { spawnSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const STAMP = path.join(root, "dist", ".build-inputs.sha256");
const INPUT_FILES = ["package.json", "package-lock.json", "tsconfig.json", "prisma.config.ts"];
const INPUT_DIRS = ["src", "prisma", "scripts"];
// Outputs of the build that live under an input folder: never part of what it is built from.
const SKIP_DIRS = new Set([path.join(root, "src", "generated")]);
/** What must exist after a build; a missing one means the last build did not finish. */
const OUTPUTS = [
  path.join(root, "dist", "cli", "main.js"),
  path.join(root, "src", "generated", "prisma", "client.ts"),
];

function listFiles(dir, out) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(full)) listFiles(full, out);
    } else if (e.isFile()) {
      out.push(full);
    }
  }
}

function hashInputs() {
  const files = INPUT_FILES.map((f) => path.join(root, f)).filter((f) => fs.existsSync(f));
  for (const d of INPUT_DIRS) listFiles(path.join(root, d), files);
  files.sort();
  const hash = crypto.createHash("sha256");
  hash.update(process.version); // a different Node may need a different build (native addons, Prisma's wasm)
  for (const f of files) {
    hash.update(path.relative(root, f));
    hash.update("\0");
    hash.update(fs.readFileSync(f));
    hash.update("\0");
  }
  return hash.digest("hex");
}

const force = process.argv.includes("--force");
const digest = hashInputs();
const previous = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, "utf8").trim() : null;
if (!force && previous === digest && OUTPUTS.every((f) => fs.existsSync(f))) {
  console.log("[build] up to date: nothing changed since the last build");
  process.exit(0);
}
console.log(
  previous === null
    ? "[build] building (no earlier build)"
    : "[build] building (sources changed since the last build)",
);
try {
  fs.unlinkSync(STAMP); // a build that fails half way must not leave the old stamp behind
} catch {
  // there was none
}
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const result = spawnSync(npm, ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
if (result.status !== 0) process.exit(result.status ?? 1);
fs.mkdirSync(path.dirname(STAMP), { recursive: true });
fs.writeFileSync(STAMP, `${digest}\n`);
