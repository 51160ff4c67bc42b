/**
 * Part 6, web: the size of the web pages as a browser downloads them (scripts/build-web.js writes
 * dist/web/sizes.json at every `npm run build`, which `npm run bench` runs first): raw and gzip-compressed
 * bytes of the server browser's app and of the GraphQL explorer, and how long the web build takes.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import type { BenchOptions } from "../lib/args";
import { repoRoot } from "../lib/child";
import { num, table, type PartResult, type Verdict } from "../lib/report";

/** The app (every page but the explorer) is what a visitor of / downloads: keep it small. */
const APP_TARGET_GZIP_BYTES = 100 * 1024;

const kib = (bytes: number): string => `${num(bytes / 1024, 1)} KiB`;

export async function runWebPart(
  _options: BenchOptions,
  _outDir: string,
  log: (line: string) => void,
): Promise<PartResult> {
  const started = Date.now();
  const root = repoRoot();
  const buildStarted = Date.now();
  execFileSync(process.execPath, [path.join(root, "scripts", "build-web.js"), "--force"], {
    cwd: root,
    stdio: "ignore",
  });
  const buildMs = Date.now() - buildStarted;
  const publicDir = path.join(root, "dist", "web", "public");
  const sizes = JSON.parse(
    readFileSync(path.join(root, "dist", "web", "sizes.json"), "utf8"),
  ) as Record<string, number>;
  const files = Object.keys(sizes).filter((f) => !f.endsWith(".LEGAL.txt"));
  const measure = (f: string): { raw: number; gzip: number } => {
    const bytes = readFileSync(path.join(publicDir, f));
    return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  };
  const group = (pred: (f: string) => boolean): { raw: number; gzip: number; files: string[] } => {
    const chosen = files.filter(pred);
    const m = chosen.map(measure);
    return {
      raw: m.reduce((s, x) => s + x.raw, 0),
      gzip: m.reduce((s, x) => s + x.gzip, 0),
      files: chosen,
    };
  };
  const app = group((f) => !f.startsWith("graphiql/"));
  const explorerPage = group((f) => f.startsWith("graphiql/") && !f.includes(".worker."));
  const workers = group((f) => f.includes(".worker."));
  log(
    `web: app ${kib(app.gzip)} gzip, explorer ${kib(explorerPage.gzip + workers.gzip)} gzip, build ${buildMs} ms`,
  );

  const verdicts: Verdict[] = [
    {
      what: "web app bundle (server browser, server, game and map pages), gzip",
      target: `≤ ${kib(APP_TARGET_GZIP_BYTES)}`,
      measured: kib(app.gzip),
      met: app.gzip <= APP_TARGET_GZIP_BYTES,
    },
  ];
  const markdown = [
    "What a browser downloads (files served as built; `gzip -9` sizes show what a compressing proxy would send: the API process itself sends them uncompressed).",
    "",
    table(
      ["bundle", "files", "raw", "gzip"],
      [
        [
          "web app: `/`, `/servers/:id`, `/games/...`, `/maps/...` (Preact + uPlot + our code)",
          app.files.map((f) => `\`${f}\``).join(", "),
          kib(app.raw),
          kib(app.gzip),
        ],
        [
          "GraphQL explorer page: `/graphql` (GraphiQL 5 + React + Monaco editor)",
          explorerPage.files.map((f) => `\`${f}\``).join(", "),
          kib(explorerPage.raw),
          kib(explorerPage.gzip),
        ],
        [
          "explorer editor workers (loaded by the explorer on demand)",
          workers.files.map((f) => `\`${f}\``).join(", "),
          kib(workers.raw),
          kib(workers.gzip),
        ],
      ],
    ),
    "",
    `\`node scripts/build-web.js --force\` (part of \`npm run build\`, which skips the explorer when it is up to date) took ${num(buildMs / 1000, 1)} s here, almost all of it the explorer's Monaco editor.`,
  ].join("\n");
  return {
    id: "web",
    title: "Web pages",
    markdown,
    commands: ["npm run bench -- --only web"],
    verdicts,
    data: { app, explorerPage, workers, buildMs },
    wallMs: Date.now() - started,
  };
}
