export async function run(_argv: string[]): Promise<number> {
  process.stderr.write('gsindex query: not implemented yet\n');
  return 1;
}
