#!/usr/bin/env node
"use strict";
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
