/** `gsindex migrate`: apply the committed SQL migrations to DATABASE_URL. */
import { parseArgs } from 'node:util';
import { migrate } from '../../migrate';
import { loadConfig } from '../../shared/config';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help) {
    process.stdout.write('usage: gsindex migrate\n\nApplies prisma/migrations to DATABASE_URL (safe to repeat).\n');
    return 0;
  }
  const config = loadConfig();
  const result = await migrate(config.databaseUrl, { log: (line) => process.stderr.write(line + '\n') });
  process.stderr.write(`migrations: ${result.applied.length} applied, ${result.skipped.length} already applied\n`);
  return 0;
}
