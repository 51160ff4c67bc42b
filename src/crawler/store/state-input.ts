/**
 * The answer update's input (server-store.ts applyStates): one JSON array per answered server, its values in
 * STATE_COLUMNS' order, which the SQL reads back by position. A batch of objects made PostgreSQL parse and
 * sort the same 30 keys again for every row, and made the parameter a sixth longer: by position the statement
 * costs PostgreSQL about 15 us less per row (docs/BENCHMARKS-history.md, 2026-11-29, night).
 */

/** Each input column and its SQL type, in the order of a row's values. */
export const STATE_COLUMNS = [
  ["id", "bigint"],
  ["name", "text"],
  ["map", "text"],
  ["folder", "text"],
  ["game", "text"],
  ["app_id", "int"],
  ["game_id", "text"],
  ["players", "int"],
  ["players_source", "text"],
  ["max_players", "int"],
  ["bots", "int"],
  ["password_protected", "boolean"],
  ["vac_secured", "boolean"],
  ["dedicated", "boolean"],
  ["server_type", "text"],
  ["os", "text"],
  ["version", "text"],
  ["keywords", "text[]"],
  ["steam_id", "text"],
  ["tv_port", "int"],
  ["tv_name", "text"],
  ["ping_ms", "int"],
  ["game_port", "int"],
  ["player_list", "jsonb"],
  ["rules_digest", "bigint"],
  ["player_names", "text"],
  ["fake_reasons", "text[]"],
  // Last: what the write decides once it has the stored row (RULES_PART).
  ["rules", "jsonb"],
  ["raw", "jsonb"],
  ["rules_kept", "boolean"],
] as const;

/** The last values of a row: its rules, its raw values and whether the stored ones are kept (answer-row.ts). */
const RULES_PART = 3;

type StateColumn = (typeof STATE_COLUMNS)[number][0];

/** One answered server's input by column name; `undefined` and `null` both read as SQL NULL. */
type StateRow = Record<StateColumn, unknown>;

/**
 * A text array as PostgreSQL reads it (`{"a","b\"c"}`): every element quoted, with `"` and `\` escaped. Its
 * cast is parsed in C, where a JSON array's elements would each be read by a subquery per row.
 */
export function textArrayLiteral(values: readonly string[]): string {
  let out = "{";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ",";
    out += `"${(values[i] as string).replace(/["\\]/g, "\\$&")}"`;
  }
  return `${out}}`;
}

/** A row without its rules part. */
export type StateRowHead = Omit<StateRow, "rules" | "raw" | "rules_kept">;

/**
 * The row's values before its rules part as JSON, in STATE_COLUMNS' order, text arrays as array literals: the
 * row's JSON array without its closing bracket, which stateRowJson completes.
 */
export function stateRowHead(row: StateRowHead): string {
  const values = new Array<unknown>(STATE_COLUMNS.length - RULES_PART);
  for (let i = 0; i < values.length; i++) {
    const [name, type] = STATE_COLUMNS[i] as (typeof STATE_COLUMNS)[number];
    const value = (row as StateRow)[name];
    values[i] =
      type === "text[]" && Array.isArray(value) ? textArrayLiteral(value as string[]) : value;
  }
  return JSON.stringify(values).slice(0, -1);
}

/** A row of the input: its head and its rules part. */
export function stateRowJson(
  head: string,
  rules: unknown,
  raw: unknown,
  rulesKept: boolean,
): string {
  return `${head},${JSON.stringify(rules)},${JSON.stringify(raw)},${rulesKept}]`;
}

function columnSql(index: number, name: string, type: string): string {
  // A JSON null (an undefined value is serialised as one) is SQL NULL in every column, as jsonb_to_recordset read it.
  if (type === "jsonb") return `NULLIF(e->${index}, 'null'::jsonb) AS ${name}`;
  return `(e->>${index})::${type} AS ${name}`;
}

/** The input's rows as a relation `alias` with one column per STATE_COLUMNS entry, from the jsonb parameter `param`. */
export function stateInputSql(param: string, alias: string): string {
  const columns = STATE_COLUMNS.map(([name, type], i) => columnSql(i, name, type)).join(", ");
  return `(SELECT ${columns} FROM jsonb_array_elements(${param}::jsonb) AS e) AS ${alias}`;
}
