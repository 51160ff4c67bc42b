/** `gsindex migrate`: apply the committed SQL migrations to DATABASE_URL. */
import { migrate } from "../../migrate";
import { loadConfig } from "../../shared/config";
import { defineCommand } from "../define-command";
import { processIo, type CommandIo } from "./io";

const command = defineCommand({
  name: "migrate",
  usage: "usage: gsindex migrate\n\nApplies prisma/migrations to DATABASE_URL (safe to repeat).",
  options: {},
});

export async function run(argv: string[], io: CommandIo = processIo): Promise<number> {
  const args = command.parse(argv, io);
  if (typeof args === "number") return args;
  const config = loadConfig();
  const result = await migrate(config.databaseUrl, { log: (line) => io.stderr.write(line + "\n") });
  io.stderr.write(
    `migrations: ${result.applied.length} applied, ${result.skipped.length} already applied\n`,
  );
  return 0;
}
