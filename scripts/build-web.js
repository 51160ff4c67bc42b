#!/usr/bin/env node
/**
 * Builds the web pages (src/web/client) into dist/web/public with esbuild: the server browser and its
 * pages (Preact + uPlot) and the GraphQL explorer (GraphiQL, React, Monaco and its workers). The API
 * process serves these files as they are (src/web/routes.ts); nothing is built at run time and no page
 * loads anything from outside the gsindex process. dist/web/sizes.json lists the output sizes for the bench;
 * `--force` rebuilds the explorer even when it is up to date.
 */
"use strict";
const path = require("node:path");
const fs = require("node:fs");
const esbuild = require("esbuild");

const root = path.resolve(__dirname, "..");
const clientDir = path.join(root, "src", "web", "client");
const outDir = path.join(root, "dist", "web", "public");

const common = {
  bundle: true,
  minify: true,
  sourcemap: false,
  target: ["es2022"],
  legalComments: "linked",
  logLevel: "warning",
  metafile: true,
  define: { "process.env.NODE_ENV": '"production"' },
  loader: { ".ttf": "file", ".woff": "file", ".woff2": "file", ".svg": "file" },
};

/** Monaco (inside GraphiQL) runs its language services in web workers: each is its own bundle. */
const MONACO_WORKERS = {
  "editor.worker": "monaco-editor/esm/vs/editor/editor.worker.js",
  "json.worker": "monaco-editor/esm/vs/language/json/json.worker.js",
  "graphql.worker": "monaco-graphql/esm/graphql.worker.js",
};

/** Newest modification time (ms) of these files and of every file under these folders. */
function newestMtimeMs(paths) {
  let newest = 0;
  for (const p of paths) {
    if (!fs.existsSync(p)) continue;
    const st = fs.statSync(p);
    if (st.isDirectory())
      newest = Math.max(newest, newestMtimeMs(fs.readdirSync(p).map((f) => path.join(p, f))));
    else newest = Math.max(newest, st.mtimeMs);
  }
  return newest;
}

/**
 * The explorer (Monaco: megabytes of code) takes most of the build; it is rebuilt only when its sources,
 * this script or the installed packages changed since its last build (or with --force), so that
 * `npm run build` stays quick. The app is always rebuilt (about a second).
 */
function explorerIsFresh() {
  if (process.argv.includes("--force")) return false;
  const built = path.join(outDir, "graphiql", "graphiql.js");
  if (!fs.existsSync(built) || !fs.existsSync(path.join(root, "dist", "web", "sizes.json")))
    return false;
  const inputs = [
    path.join(clientDir, "graphiql"),
    path.join(clientDir, "static", "graphiql.html"),
    __filename,
    path.join(root, "package-lock.json"),
    path.join(root, "node_modules", ".package-lock.json"),
  ];
  return fs.statSync(built).mtimeMs > newestMtimeMs(inputs);
}

async function build() {
  const started = Date.now();
  const keepExplorer = explorerIsFresh();
  const previousSizes = keepExplorer
    ? JSON.parse(fs.readFileSync(path.join(root, "dist", "web", "sizes.json"), "utf8"))
    : {};
  if (keepExplorer) {
    for (const f of fs.readdirSync(outDir))
      if (f !== "graphiql") fs.rmSync(path.join(outDir, f), { recursive: true, force: true });
  } else {
    fs.rmSync(outDir, { recursive: true, force: true });
  }
  fs.mkdirSync(outDir, { recursive: true });
  const explorerBuilds = keepExplorer
    ? []
    : [
        esbuild.build({
          ...common,
          entryPoints: { "graphiql/graphiql": path.join(clientDir, "graphiql", "main.ts") },
          outdir: outDir,
          format: "esm",
          assetNames: "graphiql/[name]-[hash]",
        }),
        esbuild.build({
          ...common,
          entryPoints: Object.fromEntries(
            Object.entries(MONACO_WORKERS).map(([name, mod]) => [
              `graphiql/${name}`,
              require.resolve(mod),
            ]),
          ),
          outdir: outDir,
          format: "iife",
        }),
      ];
  const results = await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: { app: path.join(clientDir, "app", "main.tsx") },
      outdir: outDir,
      format: "esm",
      jsx: "automatic",
      jsxImportSource: "preact",
    }),
    ...explorerBuilds,
  ]);
  for (const file of fs.readdirSync(path.join(clientDir, "static"))) {
    fs.copyFileSync(path.join(clientDir, "static", file), path.join(outDir, file));
  }
  const outputs = {};
  for (const r of results) Object.assign(outputs, r.metafile.outputs);
  const kept = Object.fromEntries(
    Object.entries(previousSizes).filter(([file]) => file.startsWith("graphiql/")),
  );
  const sizes = Object.assign(
    kept,
    Object.fromEntries(
      Object.entries(outputs)
        .filter(([file]) => !file.endsWith(".map"))
        .map(([file, o]) => [path.relative(outDir, path.resolve(root, file)), o.bytes]),
    ),
  );
  fs.writeFileSync(
    path.join(root, "dist", "web", "sizes.json"),
    JSON.stringify(sizes, null, 2) + "\n",
  );
  const explorerNote = keepExplorer ? " (explorer unchanged, kept)" : "";
  console.log(
    `web pages built into ${path.relative(root, outDir)} in ${Date.now() - started} ms${explorerNote}`,
  );
}

build().catch((err) => {
  console.error(err);
  process.exit(1);
});
