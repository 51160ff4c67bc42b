/**
 * The preamble every `gsindex` command shares: its options parsed strictly, `--help` / `-h` printing its
 * usage (exit 0), and a bad option printing the problem and the usage (exit 2).
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { CommandIo } from "./commands/io";

type CommandOptions = NonNullable<ParseArgsConfig["options"]>;
type HelpOption = { help: { type: "boolean"; short: "h" } };

export interface CommandDefinition<O extends CommandOptions, P extends boolean> {
  /** As typed after `gsindex` ('query', 'management'): prefixes every message. */
  name: string;
  usage: string;
  options: O;
  allowPositionals?: P;
}

export type ParsedCommand<O extends CommandOptions, P extends boolean> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O & HelpOption; strict: true; allowPositionals: P }>
>;

export interface Command<O extends CommandOptions, P extends boolean> {
  usage: string;
  /** The parsed arguments, or the exit status when the command is done already (--help, a bad option). */
  parse(argv: string[], io: CommandIo): ParsedCommand<O, P> | number;
}

export function defineCommand<const O extends CommandOptions, const P extends boolean = false>(
  definition: CommandDefinition<O, P>,
): Command<O, P> {
  const { name, usage, options, allowPositionals } = definition;
  return {
    usage,
    parse(argv, io) {
      let parsed: ParsedCommand<O, P>;
      try {
        parsed = parseArgs({
          args: argv,
          options: { ...options, help: { type: "boolean", short: "h" } },
          strict: true,
          allowPositionals: allowPositionals ?? false,
        }) as ParsedCommand<O, P>;
      } catch (err) {
        io.stderr.write(
          `gsindex ${name}: ${err instanceof Error ? err.message : String(err)}\n${usage}\n`,
        );
        return 2;
      }
      if ((parsed.values as { help?: boolean }).help) {
        io.stdout.write(`${usage}\n`);
        return 0;
      }
      return parsed;
    },
  };
}
