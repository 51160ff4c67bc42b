#!/usr/bin/env node
"use strict";
// `prisma generate` without network: Prisma 7 tries to download its native schema engine (ENOTFOUND
// here) unless PRISMA_SCHEMA_ENGINE_BINARY points at a file; generate never runs it, so a stub will do.
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const env = { ...process.env, CHECKPOINT_DISABLE: "1", PRISMA_HIDE_UPDATE_MESSAGE: "1" };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) {
  const stub = path.join(os.tmpdir(), "gsindex-prisma-schema-engine-stub");
  if (!fs.existsSync(stub))
    fs.writeFileSync(
      stub,
      '#!/bin/sh\necho "schema engine stub: migrations are applied by src/migrate.ts" >&2\nexit 1\n',
      { mode: 0o755 },
    );
  env.PRISMA_SCHEMA_ENGINE_BINARY = stub;
}
const cli = require.resolve("prisma/build/index.js", { paths: [root] });
const result = spawnSync(process.execPath, [cli, "generate", ...process.argv.slice(2)], {
  cwd: root,
  env,
  stdio: "inherit",
});
process.exit(result.status ?? 1);
