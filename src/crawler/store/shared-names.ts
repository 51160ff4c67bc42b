/**
 * The shared-names rule (docs/fake-players.md) at a crawl's close: run under a budget, and after running
 * over it, backed off for a number of closes that doubles with each over-budget run in a row, so a pool too
 * large for the budget no longer costs a core for the whole budget at every close.
 */
import { pgPoolOf, type Db, type PgPool } from "../../shared/db";
import {
  DEFAULT_FAKE_PLAYER_RULES,
  GENERIC_NAME_SERVERS,
  type FakePlayerRules,
} from "../fake-players";
import { inTransaction, rowsOf } from "./batch-write";
import { SharedNamesDeadlineError, sharedNamesVerdicts } from "./shared-names-verdict";

/**
 * How long the shared-names rule may run after a close: its read, its comparison and its write together. It
 * compares every pair of servers that have a player name in common, so its cost grows faster than the fleet
 * (bounded by GENERIC_NAME_SERVERS servers per name); it runs after the close, in transactions of its own, so
 * that a slow or cancelled run never keeps a crawl open.
 */
export const DEFAULT_SHARED_NAMES_BUDGET_MS = 30_000;

/** The most closes skipped between two tries, however many tries in a row ran over budget. */
export const MAX_SHARED_NAMES_SKIPS = 63;

/**
 * A pool this much smaller than the one that ran over budget is tried again at once: the fleet shrank (a
 * source removed, an outage), and the rule may fit its budget again.
 */
export const SHARED_NAMES_RETRY_POOL_RATIO = 0.9;

/**
 * The rule at one close: "checked", "off" (a threshold switches it off), "over budget" (cancelled at
 * its budget, the flags left as they were), "failed" (the database answered with an error: the same) or
 * "skipped" (backing off after over-budget runs: the same).
 */
export type SharedNamesResult = "checked" | "off" | "over budget" | "failed" | "skipped";

export interface SharedNamesOptions {
  /** Thresholds of the rule (sharedNameServers 0 = off). @defaultValue DEFAULT_FAKE_PLAYER_RULES */
  fakePlayers?: FakePlayerRules;
  /** @defaultValue DEFAULT_SHARED_NAMES_BUDGET_MS */
  sharedNamesBudgetMs?: number;
  /**
   * Told of an error other than the budget's own cut (the database's, or the worker's), which the result
   * alone does not say: the run is "failed", or "over budget" when the error came after its budget ran out.
   */
  onFailure?: (err: unknown) => void;
}

/** One earlier close's record of the rule, newest first. */
export interface SharedNamesRecord {
  result: Exclude<SharedNamesResult, "off">;
  /** Servers in the pool the rule compared (or would have). */
  pool: number;
}

/**
 * Whether this close skips the rule, given the records of the closes before it (newest first): after n
 * over-budget runs in a row (closes skipped between them do not break the row), the next 2^n - 1 closes
 * skip it (1, 3, 7, ... at most MAX_SHARED_NAMES_SKIPS), unless the pool shrank below
 * SHARED_NAMES_RETRY_POOL_RATIO of the last over-budget run's.
 */
export function skipSharedNames(history: readonly SharedNamesRecord[], poolNow: number): boolean {
  let skipped = 0;
  while (history[skipped]?.result === "skipped") skipped++;
  const lastRun = history[skipped];
  if (lastRun === undefined || lastRun.result !== "over budget") return false;
  if (poolNow < lastRun.pool * SHARED_NAMES_RETRY_POOL_RATIO) return false;
  let overBudgetRuns = 0;
  for (const record of history.slice(skipped)) {
    if (record.result === "over budget") overBudgetRuns++;
    else if (record.result !== "skipped") break;
  }
  const skips = Math.min(2 ** Math.min(overBudgetRuns, 30) - 1, MAX_SHARED_NAMES_SKIPS);
  return skipped < skips;
}

/** Enough records to see the longest row of skips and the over-budget runs around it. */
const HISTORY_LIMIT = 2 * (MAX_SHARED_NAMES_SKIPS + 1);

/**
 * The rule over the servers that answered since `since`, at the close of crawl `crawlId`, in a
 * transaction of its own cut at `sharedNamesBudgetMs`; or skipped while backing off (skipSharedNames).
 * The result and the pool's size are kept on the crawl's row, where the next close reads them.
 */
export async function checkSharedPlayerNames(
  db: Db,
  crawlId: number,
  since: Date,
  options: SharedNamesOptions,
): Promise<SharedNamesResult> {
  const rules = options.fakePlayers ?? DEFAULT_FAKE_PLAYER_RULES;
  const budgetMs = options.sharedNamesBudgetMs ?? DEFAULT_SHARED_NAMES_BUDGET_MS;
  if (rules.sharedNameServers < 2 || rules.sharedNamesPerServer <= 0) return "off";
  const [{ pool } = { pool: 0 }] = await db.$queryRaw<{ pool: number }[]>`
    SELECT count(*)::int AS pool FROM game_server WHERE status = 'ONLINE' AND last_answered_at >= ${since}`;
  const history = await db.$queryRaw<SharedNamesRecord[]>`
    SELECT shared_names AS result, shared_names_pool AS pool FROM crawl
    WHERE shared_names IS NOT NULL AND shared_names <> 'off' AND id <> ${crawlId}
    ORDER BY finished_at DESC NULLS LAST, id DESC LIMIT ${HISTORY_LIMIT}`;
  let result: SharedNamesResult;
  if (skipSharedNames(history, pool)) result = "skipped";
  else {
    const deadlineMs = Date.now() + budgetMs;
    try {
      await flagSharedPlayerNames(pgPoolOf(db), since, rules, deadlineMs);
      result = "checked";
    } catch (err) {
      const cut = err instanceof SharedNamesDeadlineError || /statement timeout/i.test(String(err));
      // An error that came once the budget had run out is over budget too: the run could not have fitted
      // it, and backing off is what such a pool calls for. A 1 ms budget once gave another error than the
      // cut (cause unknown, test/crawler/shared-names.int.test.ts): it is still reported.
      result = cut || Date.now() >= deadlineMs ? "over budget" : "failed";
      if (!cut) options.onFailure?.(err);
    }
  }
  await db.$executeRaw`
    UPDATE crawl SET shared_names = ${result}, shared_names_pool = ${pool} WHERE id = ${crawlId}`;
  return result;
}

/** One server of the rule's pool as PostgreSQL hands it over (names as integer ids, the ids of this read only). */
interface PoolRow {
  id: string;
  bots: number;
  names: number;
  usable: number[];
  flagged: boolean;
}

/**
 * The pool (every server of any source that answered since `since`, with the names of its last answer), each
 * server's distinct names counted and its usable ones (held by 2 to GENERIC_NAME_SERVERS servers) numbered;
 * servers with no usable name are left out unless they carry the flag (their verdict is false).
 */
const POOL_SQL = `
  WITH pool AS (
    SELECT id, COALESCE(bots, 0) AS bots, player_names, 'SHARED_PLAYER_NAMES' = ANY(fake_reasons) AS flagged
    FROM game_server WHERE status = 'ONLINE' AND last_answered_at >= $1::timestamptz
  ), names AS (
    -- Each server's names made distinct on their own row: cheaper than one DISTINCT over every (server, name).
    SELECT p.id, n.name FROM pool p
    CROSS JOIN LATERAL (SELECT DISTINCT x FROM unnest(string_to_array(p.player_names, E'\\n')) AS x WHERE x <> '') AS n(name)
  ), usable AS (
    SELECT name, (row_number() OVER ())::int - 1 AS name_id FROM names GROUP BY name HAVING count(*) BETWEEN 2 AND $2::int
  ), per_server AS (
    SELECT n.id, count(*)::int AS names, array_agg(u.name_id) FILTER (WHERE u.name_id IS NOT NULL) AS usable
    FROM names n LEFT JOIN usable u USING (name) GROUP BY n.id
  )
  SELECT p.id::text AS id, p.bots, COALESCE(s.names, 0) AS names, COALESCE(s.usable, '{}') AS usable, p.flagged
  FROM pool p LEFT JOIN per_server s ON s.id = p.id
  WHERE p.flagged OR s.usable IS NOT NULL`;

/**
 * The same player names on several servers at once (docs/fake-players.md): "at once" is every server of any
 * source that answered since this crawl started, with the names of its last answer. A server fires when
 * `sharedNameServers - 1` other servers each have at least `sharedNamesPerServer` of its names beyond the
 * bots it reports, and at least half its names; one of those servers that no longer does loses the reason.
 * Chance overlaps between real servers are a few names out of a long list, never half of it. PostgreSQL
 * reads the pool with the names as integers; the pairs are counted in memory (shared-names-verdict.ts); only
 * the servers whose verdict changed are written. Each statement and the comparison stop at `deadlineMs`
 * (SharedNamesDeadlineError, or PostgreSQL's statement timeout).
 */
async function flagSharedPlayerNames(
  pg: PgPool,
  since: Date,
  rules: FakePlayerRules,
  deadlineMs: number,
): Promise<void> {
  const timeoutSql = (): string =>
    `SET LOCAL statement_timeout = ${Math.max(1, Math.ceil(deadlineMs - Date.now()))}`;
  const rows = await inTransaction(pg, async (tx) => {
    await tx.query(timeoutSql());
    return rowsOf<PoolRow>(tx, POOL_SQL, [since.toISOString(), GENERIC_NAME_SERVERS]);
  });
  const fires = sharedNamesVerdicts(rows, rules, deadlineMs);
  const ids: string[] = [];
  const verdicts: boolean[] = [];
  rows.forEach((row, i) => {
    if (fires[i] !== row.flagged) {
      ids.push(row.id);
      verdicts.push(fires[i]!);
    }
  });
  if (ids.length === 0) return;
  await inTransaction(pg, async (tx) => {
    await tx.query(timeoutSql());
    await tx.query(
      `WITH v AS (SELECT * FROM unnest($1::bigint[], $2::boolean[]) AS v(id, fires)),
      target AS (
        -- Rows locked in id order first, as every writer of game_server does (server-store.ts lockServers);
        -- a row whose flag changed since the read is left alone.
        SELECT g.id, v.fires FROM game_server g JOIN v ON v.id = g.id
        WHERE v.fires <> ('SHARED_PLAYER_NAMES' = ANY(g.fake_reasons))
        ORDER BY g.id FOR UPDATE OF g)
      UPDATE game_server g SET
        fake_reasons = CASE WHEN t.fires THEN array_append(g.fake_reasons, 'SHARED_PLAYER_NAMES') ELSE array_remove(g.fake_reasons, 'SHARED_PLAYER_NAMES') END,
        suspected_fake = t.fires OR cardinality(array_remove(g.fake_reasons, 'SHARED_PLAYER_NAMES')) > 0,
        updated_at = now()
      FROM target t WHERE g.id = t.id`,
      [ids, verdicts],
    );
  });
}
