/**
 * The `gsindex` command line. Each subcommand lives in src/cli/commands/<name>.ts and
 * exports `run(argv): Promise<number>` (the exit status). Commands are loaded lazily so
 * that `gsindex query` does not pay for Prisma or GraphQL.
 */
type CommandModule = { run(argv: string[]): Promise<number> };

// require, not import(): native import() in CommonJS breaks under jest and gains nothing here.
const load = (path: string): Promise<CommandModule> =>
  Promise.resolve().then(() => require(path) as CommandModule);

const commands: Record<string, { summary: string; load: () => Promise<CommandModule> }> = {
  query: {
    summary: "query one game server (info, players, rules)",
    load: () => load("./commands/query"),
  },
  master: {
    summary: "list a Valve master server or the Steam Web API",
    load: () => load("./commands/master"),
  },
  management: {
    summary: "run gsindex's JSON-over-TCP management server, or list a remote one",
    load: () => load("./commands/management"),
  },
  schema: { summary: "print the GraphQL schema (SDL)", load: () => load("./commands/schema") },
  decode: {
    summary: "decode captured responses from hex on standard input",
    load: () => load("./commands/decode"),
  },
  simulate: {
    summary: "run a fleet of simulated A2S servers on loopback",
    load: () => load("./commands/simulate"),
  },
  "simulate-master": {
    summary: "run a simulated Valve master (and Steam Web API) on loopback",
    load: () => load("./commands/simulate-master"),
  },
  migrate: {
    summary: "apply the database migrations (safe to repeat)",
    load: () => load("./commands/migrate"),
  },
  crawl: {
    summary: "run one crawl in the foreground (--once) with progress and totals",
    load: () => load("./commands/crawl"),
  },
  demo: {
    summary: "a simulated fleet crawled and served on loopback, within a minute",
    load: () => load("./commands/demo"),
  },
  serve: {
    summary: "run the API, scheduler, workers and management server (--role to pick)",
    load: () => load("./commands/serve"),
  },
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(12)} ${c.summary}`);
  return [
    "usage: gsindex <command> [options]",
    "",
    "commands:",
    ...lines,
    "",
    "gsindex <command> --help for a command's options",
  ].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage() + "\n");
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`gsindex: unknown command '${name}'\n${usage()}\n`);
    return 2;
  }
  const mod = await command.load();
  return mod.run(rest);
}
