/**
 * The raw sample write: one sample per server per crawl into server_sample (hour partitions; the
 * retention job compacts finished hours into one row per server per day: docs/storage.md, "Raw samples").
 */
import type { ServerStatus } from "../../protocol";
import { countOf, type Tx } from "./batch-write";
import { answeredPlayerCount } from "./player-count";
import { clampInt, cleanText, SMALLINT_MAX } from "./sanitize";

export interface SampleRow {
  id: number;
  online: boolean;
  players: number;
  bots: number | null;
  max_players: number;
  map: string | null;
  ping_ms: number | null;
}

export function sampleOf(
  id: number,
  /** Its rules are not read: an answer whose batch packed them (held-rules.ts) will do. */
  status: Omit<ServerStatus, "rules"> | null,
  pingMs: number | null,
  reported = false,
): SampleRow {
  if (status === null)
    return { id, online: false, players: 0, bots: null, max_players: 0, map: null, ping_ms: null };
  return {
    id,
    online: true,
    players:
      clampInt(reported ? status.players : answeredPlayerCount(status).players, 0, SMALLINT_MAX) ??
      0,
    bots: clampInt(status.bots, 0, SMALLINT_MAX),
    max_players: clampInt(status.maxPlayers, 0, SMALLINT_MAX) ?? 0,
    map: cleanText(status.map),
    ping_ms: clampInt(pingMs ?? status.pingMs, 0, SMALLINT_MAX),
  };
}

/**
 * One sample per server per crawl; a duplicate (retried job) is ignored, whether its twin is still a row
 * of its hour (the primary key) or compacted already into the server's day row (the NOT EXISTS: only a
 * day row compacted up to this crawl's start has its arrays read). Returns rows inserted.
 */
export async function insertSamples(
  tx: Tx,
  crawlId: number,
  crawlAt: Date,
  samples: SampleRow[],
): Promise<number> {
  if (samples.length === 0) return 0;
  const input = JSON.stringify(samples);
  return countOf(
    tx,
    `INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map, ping_ms)
    SELECT s.id, $1::timestamptz, $2::bigint, s.online, s.players, s.bots, s.max_players, s.map, s.ping_ms
    FROM jsonb_to_recordset($3::jsonb) AS s(id bigint, online boolean, players smallint, bots smallint,
      max_players smallint, map text, ping_ms smallint)
    WHERE NOT EXISTS (
      SELECT 1 FROM server_sample_day d
      WHERE d.game_server_id = s.id AND d.day = ($1::timestamptz AT TIME ZONE 'UTC')::date
        AND d.until_at >= $1::timestamptz AND $2::bigint = ANY(d.crawl_id))
    ON CONFLICT DO NOTHING`,
    [crawlAt, crawlId, input],
  );
}
