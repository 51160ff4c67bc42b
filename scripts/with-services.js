#!/usr/bin/env node
"use strict";
// Runs a command with DATABASE_URL, QUEUE_BACKEND and (when the queues are on Redis) REDIS_URL pointing
// at the services gsindex found or started (see src/shared/services.ts for the order of preference),
// then stops what it started, once the command has exited: an embedded PostgreSQL runs in a session of its
// own, so a Ctrl-C or a SIGTERM to the process group stops the command first, on a database that is still up.
//   node scripts/with-services.js [--database NAME] -- command args...
// With --database the command gets that database (created when missing, existing data untouched);
// without it, the server's maintenance database, in which the tests create databases of their own.
const { spawn } = require("node:child_process");
const path = require("node:path");

async function main() {
  const argv = process.argv.slice(2);
  const dashes = argv.indexOf("--");
  const own = dashes < 0 ? argv : argv.slice(0, dashes);
  const command = dashes < 0 ? [] : argv.slice(dashes + 1);
  if (command.length === 0) {
    console.error("usage: node scripts/with-services.js [--database NAME] -- command args...");
    return 2;
  }
  const dbFlag = own.indexOf("--database");
  const database = dbFlag >= 0 ? own[dbFlag + 1] : undefined;

  // A signal that arrives while the services start is kept for the command (or ends the run, when the
  // start is still under way), so what was started is always stopped.
  let child = null;
  let signalled = null;
  const forward = (signal) => {
    signalled = signalled ?? signal;
    if (child) child.kill(signal);
  };
  process.on("SIGINT", forward);
  process.on("SIGTERM", forward);

  const services = require(path.join(__dirname, "..", "dist", "shared", "services.js"));
  const log = { info: (m) => console.error(`[services] ${m}`) };
  let resolved;
  try {
    resolved = await services.resolveServices({
      env: process.env,
      projectDir: process.env.GSINDEX_PROJECT_DIR || path.join(__dirname, ".."),
      log,
    });
  } catch (err) {
    console.error(`[services] ${err.message}`);
    return 1;
  }
  for (const note of resolved.notes) log.info(note);

  try {
    let databaseUrl = resolved.databaseServerUrl;
    if (database && !process.env.DATABASE_URL) {
      await services.ensureDatabase(resolved.databaseServerUrl, database);
      databaseUrl = services.withDatabase(resolved.databaseServerUrl, database);
    }
    const env = { ...process.env, DATABASE_URL: databaseUrl, QUEUE_BACKEND: resolved.queueBackend };
    if (resolved.redisUrl) env.REDIS_URL = resolved.redisUrl;
    else delete env.REDIS_URL;
    if (signalled) return 130;
    child = spawn(command[0], command.slice(1), { stdio: "inherit", env });
    return await new Promise((resolve) =>
      child.on("exit", (c, signal) => resolve(c ?? (signal ? 1 : 0))),
    );
  } finally {
    await resolved.stop();
  }
}

// Exit at once with the command's status: nothing started here should keep the process alive.
main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
