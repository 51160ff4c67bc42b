/** `gsindex schema`: print the GraphQL SDL (or write it with --out; the repository commits schema.graphql). */
import { writeFileSync } from "node:fs";
import { printApiSchema } from "../../graphql/schema";
import { defineCommand } from "../define-command";
import { processIo, type CommandIo } from "./io";

const command = defineCommand({
  name: "schema",
  usage:
    "usage: gsindex schema [--out FILE]\n\nPrints the GraphQL schema (SDL); --out writes it to FILE (the repository keeps it in schema.graphql).",
  options: { out: { type: "string", short: "o" } },
});

export async function run(argv: string[], io: CommandIo = processIo): Promise<number> {
  const args = command.parse(argv, io);
  if (typeof args === "number") return args;
  const sdl = await printApiSchema();
  if (args.values.out) writeFileSync(args.values.out, sdl);
  else io.stdout.write(sdl);
  return 0;
}
