#!/usr/bin/env node
/**
 * Builds the web pages (src/web/client) into dist/web/public with esbuild: the server browser and its
 * pages (Preact + uPlot) and the GraphQL explorer (GraphiQL, React, Monaco and its workers). The API
 * process serves these files as they are (src/web/routes.ts); nothing is built at run time and no page
 * loads anything from outside the gsindex process. `--metafile` writes the sizes for the bench.
 */
'use strict';
const path = require('node:path');
const fs = require('node:fs');
const esbuild = require('esbuild');

const root = path.resolve(__dirname, '..');
const clientDir = path.join(root, 'src', 'web', 'client');
const outDir = path.join(root, 'dist', 'web', 'public');

const common = {
  bundle: true,
  minify: true,
  sourcemap: false,
  target: ['es2022'],
  legalComments: 'linked',
  logLevel: 'warning',
  metafile: true,
  define: { 'process.env.NODE_ENV': '"production"' },
  loader: { '.ttf': 'file', '.woff': 'file', '.woff2': 'file', '.svg': 'file' },
};

/** Monaco (inside GraphiQL) runs its language services in web workers: each is its own bundle. */
const MONACO_WORKERS = {
  'editor.worker': 'monaco-editor/esm/vs/editor/editor.worker.js',
  'json.worker': 'monaco-editor/esm/vs/language/json/json.worker.js',
  'graphql.worker': 'monaco-graphql/esm/graphql.worker.js',
};

async function build() {
  const started = Date.now();
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const results = await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: { app: path.join(clientDir, 'app', 'main.tsx') },
      outdir: outDir,
      format: 'esm',
      jsx: 'automatic',
      jsxImportSource: 'preact',
    }),
    esbuild.build({
      ...common,
      entryPoints: { 'graphiql/graphiql': path.join(clientDir, 'graphiql', 'main.ts') },
      outdir: outDir,
      format: 'esm',
      assetNames: 'graphiql/[name]-[hash]',
    }),
    esbuild.build({
      ...common,
      entryPoints: Object.fromEntries(Object.entries(MONACO_WORKERS).map(([name, mod]) => [`graphiql/${name}`, require.resolve(mod)])),
      outdir: outDir,
      format: 'iife',
    }),
  ]);
  for (const file of fs.readdirSync(path.join(clientDir, 'static'))) {
    fs.copyFileSync(path.join(clientDir, 'static', file), path.join(outDir, file));
  }
  const outputs = {};
  for (const r of results) Object.assign(outputs, r.metafile.outputs);
  const sizes = Object.fromEntries(
    Object.entries(outputs)
      .filter(([file]) => !file.endsWith('.map'))
      .map(([file, o]) => [path.relative(outDir, path.resolve(root, file)), o.bytes]),
  );
  fs.writeFileSync(path.join(root, 'dist', 'web', 'sizes.json'), JSON.stringify(sizes, null, 2) + '\n');
  console.log(`web pages built into ${path.relative(root, outDir)} in ${Date.now() - started} ms`);
}

build().catch((err) => {
  console.error(err);
  process.exit(1);
});
