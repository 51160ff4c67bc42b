#!/usr/bin/env -S node --max-semi-space-size=32
"use strict";
// The flags on the first line are read by V8 only at start: src/service/node-flags.ts says why.
// The CLI is compiled TypeScript; `npm install` builds it (the `prepare` script).
require("../dist/cli/main.js")
  .main(process.argv.slice(2))
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
