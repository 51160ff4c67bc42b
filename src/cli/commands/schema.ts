/** `gsindex schema`: print the GraphQL SDL (or write it with --out; the repository commits schema.graphql). */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { printApiSchema } from '../../graphql/schema';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' }, out: { type: 'string', short: 'o' } }, strict: true });
  if (values.help) {
    process.stdout.write('usage: gsindex schema [--out FILE]\n\nPrints the GraphQL schema (SDL); --out writes it to FILE (the repository keeps it in schema.graphql).\n');
    return 0;
  }
  const sdl = await printApiSchema();
  if (values.out) writeFileSync(values.out, sdl);
  else process.stdout.write(sdl);
  return 0;
}
