/**
 * `gsindex demo [--servers N] [--api-port P] [--interval-ms MS] [--day-minutes M]`: the simulated
 * fleet crawled by the whole service, on loopback only. `npm run demo` runs it with services found
 * or started (scripts/with-services.js) in a database of its own (gsindex_demo).
 */
import net from "node:net";
import { startDemo } from "../../demo/demo";
import { freePort } from "../../shared/free-port";
import { loadConfig } from "../../shared/config";
import { createLogger } from "../../shared/logger";
import { defineCommand } from "../define-command";
import { waitForStopSignal } from "../stop-signal";
import { processIo, type CommandIo } from "./io";

const command = defineCommand({
  name: "demo",
  usage: `usage: gsindex demo [--servers N] [--api-port PORT] [--management-port PORT] [--interval-ms MS] [--day-minutes M]

Starts a simulated fleet (default 3000 servers) on loopback with a simulated master, Bomberman servers
registered with the management server, and gsindex crawling each source every --interval-ms (default 10000),
or when its previous crawl is done if that takes longer (one crawl per source at a time).
The fleet's populations follow a day compressed into --day-minutes (default 10). Stop with Ctrl-C.`,
  options: {
    servers: { type: "string" },
    "api-port": { type: "string" },
    "management-port": { type: "string" },
    "interval-ms": { type: "string" },
    "day-minutes": { type: "string" },
  },
});

function positiveInt(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`--${name} wants a whole number, got ${JSON.stringify(value)}`);
  return n;
}

function examples(webUrl: string, apiUrl: string): string {
  return `
Open ${webUrl} in a browser: the server browser, server, game and map pages.

gsindex demo is running.
  GraphQL (GraphiQL in a browser): ${apiUrl}
  Metrics: ${apiUrl.replace("/graphql", "/metrics")}

Try, after the first crawl (a few seconds):
  curl -s ${apiUrl} -H 'content-type: application/json' \\
    -d '{"query":"{ servers(first: 5, orderBy: {field: PLAYERS, direction: DESC}) { totalCount edges { node { name map players maxPlayers } } } }"}'
  curl -s ${apiUrl} -H 'content-type: application/json' \\
    -d '{"query":"{ games(first: 5) { folder appId players servers } }"}'

Stop with Ctrl-C.
`;
}

export async function run(argv: string[], io: CommandIo = processIo): Promise<number> {
  const args = command.parse(argv, io);
  if (typeof args === "number") return args;
  const { values } = args;
  const config = loadConfig();
  const logger = createLogger(config.logLevel, "gsindex-demo");
  let options;
  try {
    options = {
      servers: positiveInt(values.servers, 3000, "servers"),
      apiPort: positiveInt(
        values["api-port"],
        process.env.API_PORT ? config.apiPort : await freePortPreferring(4000),
        "api-port",
      ),
      managementPort: positiveInt(
        values["management-port"],
        await freePortPreferring(51963),
        "management-port",
      ),
      crawlIntervalMs: Math.max(2000, positiveInt(values["interval-ms"], 10_000, "interval-ms")),
      dayMs: Math.max(1, positiveInt(values["day-minutes"], 10, "day-minutes")) * 60_000,
      env: process.env,
      logger,
    };
  } catch (err) {
    io.stderr.write(`gsindex demo: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const demo = await startDemo(options);
  io.stdout.write(examples(demo.webUrl, demo.apiUrl));
  await waitForStopSignal();
  await demo.stop();
  return 0;
}

/** The usual port when it is free (a gsindex started with `npm start` may hold it), else any free one. */
async function freePortPreferring(port: number): Promise<number> {
  const free = await new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
  return free ? port : freePort();
}
