/**
 * Writes of the crawl, each one multi-row statement over a jsonb array (jsonb_to_recordset), never a
 * round trip per server:
 * - recordListing: upsert the servers a listing found, plan the query batches of the crawl, and mark
 *   the listing run done, in one transaction (a retried listing job finds the run done and only
 *   re-enqueues its batches);
 * - writeBatchOutcomes: current state, life cycle and one sample per server, plus the crawl counters,
 *   in one transaction guarded by the batch's done_at (a retried batch job writes nothing twice).
 */
import type { ServerStatus } from '../../protocol/status';
import type { Db } from '../../shared/db';
import { countryOfIp } from '../geo/country-lookup';
import type { ReportedState } from '../list-source';
import { clampInt, cleanJson, cleanText, INT_MAX, SMALLINT_MAX } from './sanitize';

type Tx = Parameters<Parameters<Db['$transaction']>[0]>[0];

const TX_OPTIONS = { timeout: 120_000, maxWait: 30_000 };

/** One listed server, after the address policy. */
export interface ListingRow {
  address: string;
  ip: string | null;
  queryPort: number;
  gamePort: number | null;
  region: number | null;
  protocol: string;
  notQueryable: boolean;
  isRelay: boolean;
  managed: boolean;
  reported: ReportedState | null;
}

export interface ListingWrite {
  crawlId: number;
  crawlAt: Date;
  runId: number;
  sourceId: number;
  /** Batch keys are `<label>-<n>`. */
  label: string;
  batchSize: number;
  partial: boolean;
  error: string | null;
  /** Where the next listing of this split goes on from (ListingResult.resumeCursor); absent: from the start. */
  resumeCursor?: string | null;
  rows: ListingRow[];
}

export interface ListingWriteResult {
  /** The run had been recorded already (a retried job): nothing was written. */
  alreadyDone: boolean;
  found: number;
  /** Batch keys planned for this run. */
  batchKeys: string[];
}

/** Crawl-wide lock: listing runs of one crawl plan their batches one at a time. */
const CRAWL_LOCK_CLASS = 7_271_006;

function dedupe(rows: ListingRow[]): ListingRow[] {
  const seen = new Map<string, ListingRow>();
  for (const row of rows) seen.set(`${row.address}\u0000${row.queryPort}`, row);
  return [...seen.values()];
}

/**
 * Locks these game_server rows in id order. Every multi-row write takes its row locks through this (or in
 * id order in SQL) before it changes them, so writers over the same servers (a listing, query batches of
 * two crawls, a crawl closing) queue behind each other instead of deadlocking (40P01).
 */
async function lockServers(tx: Tx, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await tx.$queryRaw`SELECT id FROM game_server WHERE id = ANY(${[...ids]}::bigint[]) ORDER BY id FOR UPDATE`;
}

const byAddressAndPort = (a: ListingRow, b: ListingRow): number => (a.address < b.address ? -1 : a.address > b.address ? 1 : a.queryPort - b.queryPort);

export async function recordListing(db: Db, w: ListingWrite): Promise<ListingWriteResult> {
  // In one order (address, query port), so concurrent listings insert new servers in the same order.
  const rows = dedupe(w.rows).sort(byAddressAndPort);
  // Outside the transaction: the first lookup of a process loads the country table (a few hundred ms).
  const countries = rows.map((r) => countryOfIp(r.ip));
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${CRAWL_LOCK_CLASS}, ${w.crawlId})`;
    const claimed = await tx.$queryRaw<{ id: number }[]>`
      UPDATE crawl_run SET finished_at = now(), found = ${rows.length}, partial = ${w.partial}, error = ${w.error},
        resume_cursor = ${w.resumeCursor ?? null}
      WHERE id = ${w.runId} AND finished_at IS NULL RETURNING id`;
    if (claimed.length === 0) {
      const keys = await tx.$queryRaw<{ batch_key: string }[]>`SELECT batch_key FROM crawl_batch WHERE run_id = ${w.runId} ORDER BY batch_key`;
      return { alreadyDone: true, found: 0, batchKeys: keys.map((k) => k.batch_key) };
    }
    const input = JSON.stringify(
      rows.map((r, i) => ({
        address: cleanText(r.address),
        ip: r.ip,
        country: countries[i] ?? null,
        query_port: r.queryPort,
        game_port: r.gamePort,
        region: r.region,
        protocol: r.protocol,
        not_queryable: r.notQueryable,
        is_relay: r.isRelay,
        managed: r.managed,
      })),
    );
    // The listed servers that exist, locked in id order before the upsert changes them.
    await tx.$queryRaw`
      SELECT g.id FROM game_server g
      JOIN jsonb_to_recordset(${input}::jsonb) AS x(address text, query_port int) ON g.address = x.address AND g.query_port = x.query_port
      ORDER BY g.id FOR UPDATE OF g`;
    // Servers listed earlier in this same crawl (another region: 0xFF lists the whole world).
    const [before] = await tx.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM game_server g
      JOIN jsonb_to_recordset(${input}::jsonb) AS x(address text, query_port int) ON g.address = x.address AND g.query_port = x.query_port
      WHERE g.last_listed_at >= ${w.crawlAt}`;
    const upserted = await tx.$queryRaw<{ id: number; address: string; query_port: number; not_queryable: boolean; management_registered: boolean }[]>`
      INSERT INTO game_server AS g (address, ip, country, query_port, game_port, region, protocol, not_queryable, is_relay,
        management_registered, source_id, last_listed_at, status, updated_at)
      SELECT x.address, x.ip, x.country, x.query_port, x.game_port, x.region, x.protocol, x.not_queryable, x.is_relay,
        x.managed, ${w.sourceId}, now(), 'UNKNOWN', now()
      FROM jsonb_to_recordset(${input}::jsonb) AS x(address text, ip inet, country text, query_port int, game_port int,
        region int, protocol text, not_queryable boolean, is_relay boolean, managed boolean)
      ON CONFLICT (address, query_port) DO UPDATE SET
        ip = EXCLUDED.ip,
        country = EXCLUDED.country,
        game_port = COALESCE(EXCLUDED.game_port, g.game_port),
        region = CASE WHEN EXCLUDED.region IS NULL THEN g.region
                      WHEN EXCLUDED.region = 255 THEN COALESCE(g.region, 255)
                      ELSE EXCLUDED.region END,
        protocol = EXCLUDED.protocol,
        not_queryable = EXCLUDED.not_queryable,
        is_relay = EXCLUDED.is_relay,
        management_registered = EXCLUDED.management_registered,
        source_id = EXCLUDED.source_id,
        last_listed_at = now(),
        missed_listings = 0,
        status = CASE WHEN g.status = 'DELISTED' THEN 'UNKNOWN'::"GameServerStatus" ELSE g.status END,
        updated_at = now()
      RETURNING g.id, g.address, g.query_port, g.not_queryable, g.management_registered`;

    const byKey = new Map(rows.map((r) => [`${cleanText(r.address)}\u0000${r.queryPort}`, r]));
    const reported: { id: number; state: ReportedState; managed: boolean }[] = [];
    const queryable: number[] = [];
    for (const u of upserted) {
      const row = byKey.get(`${u.address}\u0000${u.query_port}`);
      if (row?.reported) reported.push({ id: u.id, state: row.reported, managed: u.management_registered });
      if (!u.not_queryable && !u.management_registered) queryable.push(u.id);
    }

    // Management registrations: their state is what they report, sampled like an answer.
    const managed = reported.filter((r) => r.managed);
    let written = 0;
    if (managed.length > 0) {
      await applyStates(tx, managed.map((r) => ({ id: r.id, status: reportedToStatus(r.state), pingMs: null })), false);
      written = await insertSamples(
        tx,
        w.crawlId,
        w.crawlAt,
        managed.map((r) => sampleOf(r.id, reportedToStatus(r.state), null)),
      );
    }
    // Other sources' own records (Steam Web API) index a server before any answer arrives.
    const unanswered = reported.filter((r) => !r.managed);
    if (unanswered.length > 0) {
      await applyStates(tx, unanswered.map((r) => ({ id: r.id, status: reportedToStatus(r.state), pingMs: null })), true);
    }

    const inCrawl = await tx.$queryRaw<{ id: number }[]>`SELECT unnest(server_ids) AS id FROM crawl_batch WHERE crawl_id = ${w.crawlId}`;
    const planned = new Set(inCrawl.map((r) => r.id));
    const fresh = queryable.filter((id) => !planned.has(id)).sort((a, b) => a - b);
    const batches: { key: string; ids: number[] }[] = [];
    for (let i = 0; i < fresh.length; i += w.batchSize) {
      batches.push({ key: `${w.label}-${batches.length}`, ids: fresh.slice(i, i + w.batchSize) });
    }
    if (batches.length > 0) {
      const plan = JSON.stringify(batches.map((b) => ({ batch_key: b.key, server_ids: b.ids })));
      await tx.$executeRaw`
        INSERT INTO crawl_batch (crawl_id, batch_key, run_id, server_ids)
        SELECT ${w.crawlId}, x.batch_key, ${w.runId}, x.server_ids
        FROM jsonb_to_recordset(${plan}::jsonb) AS x(batch_key text, server_ids int[])
        ON CONFLICT DO NOTHING`;
    }
    const newlyListed = rows.length - (before?.n ?? 0);
    await tx.$executeRaw`
      UPDATE crawl SET listed = listed + ${newlyListed}, written = written + ${written},
        answered = answered + ${managed.length}, partial = partial OR ${w.partial}
      WHERE id = ${w.crawlId}`;
    if (managed.length > 0) await tx.$executeRaw`UPDATE crawl_run SET answered = answered + ${managed.length} WHERE id = ${w.runId}`;
    return { alreadyDone: false, found: rows.length, batchKeys: batches.map((b) => b.key) };
  }, TX_OPTIONS);
}

function reportedToStatus(r: ReportedState): ServerStatus {
  return {
    protocol: 'source',
    name: r.name ?? '',
    map: r.map ?? '',
    folder: r.folder ?? null,
    game: r.game ?? null,
    appId: r.appId ?? null,
    gameId: r.gameId ?? null,
    players: r.players,
    maxPlayers: r.maxPlayers,
    bots: r.bots ?? null,
    passwordProtected: r.passwordProtected ?? null,
    vacSecured: r.vacSecured ?? null,
    dedicated: r.dedicated ?? null,
    os: r.os ?? null,
    version: r.version ?? null,
    keywords: r.keywords ?? [],
    gamePort: r.gamePort ?? null,
    steamId: r.steamId ?? null,
    playerList: r.playerList ?? [],
    rules: r.rules ?? [],
    raw: r.raw ?? null,
    pingMs: null,
    serverType: r.serverType ?? null,
    tvPort: r.tvPort ?? null,
    tvName: r.tvName ?? null,
  };
}

const SERVER_TYPE_CODE = { dedicated: 'd', listen: 'l', proxy: 'p' } as const;

interface StateWrite {
  id: number;
  status: ServerStatus;
  pingMs: number | null;
}

function stateRow(s: StateWrite): Record<string, unknown> {
  const st = s.status;
  const playerList = cleanJson(st.playerList);
  return {
    id: s.id,
    name: cleanText(st.name),
    map: cleanText(st.map),
    folder: cleanText(st.folder),
    game: cleanText(st.game),
    app_id: clampInt(st.appId, -INT_MAX, INT_MAX),
    game_id: cleanText(st.gameId),
    players: clampInt(st.players, 0, INT_MAX) ?? 0,
    max_players: clampInt(st.maxPlayers, 0, INT_MAX) ?? 0,
    bots: clampInt(st.bots, 0, INT_MAX),
    password_protected: st.passwordProtected,
    vac_secured: st.vacSecured,
    dedicated: st.dedicated,
    server_type: st.serverType ? SERVER_TYPE_CODE[st.serverType] : null,
    os: st.os,
    version: cleanText(st.version),
    keywords: st.keywords.map((k) => cleanText(k)),
    steam_id: cleanText(st.steamId),
    tv_port: clampInt(st.tvPort, 0, 65535),
    tv_name: cleanText(st.tvName),
    ping_ms: clampInt(s.pingMs ?? st.pingMs, 0, INT_MAX),
    game_port: clampInt(st.gamePort, 1, 65535),
    player_list: playerList,
    rules: cleanJson(st.rules),
    raw: st.raw === null ? null : cleanJson(st.raw),
    player_names: playerList.map((p) => p.name).filter((n) => n !== '').join('\n'),
  };
}

/**
 * Current state of answered servers (status ONLINE, failures reset). With `onlyIfNeverAnswered`
 * (a source's own record), only servers with no answer yet take it, and their status is left alone.
 */
async function applyStates(tx: Tx, states: StateWrite[], onlyIfNeverAnswered: boolean): Promise<void> {
  const input = JSON.stringify(states.map(stateRow));
  await tx.$executeRaw`
    UPDATE game_server AS g SET
      name = u.name, map = u.map, folder = u.folder, game = u.game, app_id = u.app_id, game_id = u.game_id,
      players = u.players, max_players = u.max_players, bots = u.bots,
      password_protected = u.password_protected, vac_secured = u.vac_secured, dedicated = u.dedicated,
      server_type = u.server_type, os = u.os, version = u.version, keywords = COALESCE(u.keywords, '{}'),
      steam_id = u.steam_id, tv_port = u.tv_port, tv_name = u.tv_name, ping_ms = u.ping_ms,
      game_port = COALESCE(u.game_port, g.game_port),
      player_list = COALESCE(u.player_list, '[]'), rules = COALESCE(u.rules, '[]'), raw = u.raw,
      player_names = COALESCE(u.player_names, ''),
      status = CASE WHEN ${onlyIfNeverAnswered} THEN g.status ELSE 'ONLINE'::"GameServerStatus" END,
      consecutive_failures = CASE WHEN ${onlyIfNeverAnswered} THEN g.consecutive_failures ELSE 0 END,
      last_error = CASE WHEN ${onlyIfNeverAnswered} THEN g.last_error ELSE NULL END,
      last_queried_at = CASE WHEN ${onlyIfNeverAnswered} THEN g.last_queried_at ELSE now() END,
      last_answered_at = CASE WHEN ${onlyIfNeverAnswered} THEN g.last_answered_at ELSE now() END,
      updated_at = now()
    FROM jsonb_to_recordset(${input}::jsonb) AS u(id int, name text, map text, folder text, game text, app_id int,
      game_id text, players int, max_players int, bots int, password_protected boolean, vac_secured boolean,
      dedicated boolean, server_type text, os text, version text, keywords text[], steam_id text, tv_port int,
      tv_name text, ping_ms int, game_port int, player_list jsonb, rules jsonb, raw jsonb, player_names text)
    WHERE g.id = u.id AND (NOT ${onlyIfNeverAnswered} OR g.last_answered_at IS NULL)`;
}

interface SampleRow {
  id: number;
  online: boolean;
  players: number;
  bots: number | null;
  max_players: number;
  map: string | null;
  ping_ms: number | null;
}

function sampleOf(id: number, status: ServerStatus | null, pingMs: number | null): SampleRow {
  if (status === null) return { id, online: false, players: 0, bots: null, max_players: 0, map: null, ping_ms: null };
  return {
    id,
    online: true,
    players: clampInt(status.players, 0, SMALLINT_MAX) ?? 0,
    bots: clampInt(status.bots, 0, SMALLINT_MAX),
    max_players: clampInt(status.maxPlayers, 0, SMALLINT_MAX) ?? 0,
    map: cleanText(status.map),
    ping_ms: clampInt(pingMs ?? status.pingMs, 0, SMALLINT_MAX),
  };
}

/** One sample per server per crawl; a duplicate (retried job) is ignored. Returns rows inserted. */
async function insertSamples(tx: Tx, crawlId: number, crawlAt: Date, samples: SampleRow[]): Promise<number> {
  if (samples.length === 0) return 0;
  const input = JSON.stringify(samples);
  return tx.$executeRaw`
    INSERT INTO server_sample (game_server_id, crawl_at, crawl_id, online, players, bots, max_players, map, ping_ms)
    SELECT s.id, ${crawlAt}, ${crawlId}, s.online, s.players, s.bots, s.max_players, s.map, s.ping_ms
    FROM jsonb_to_recordset(${input}::jsonb) AS s(id int, online boolean, players smallint, bots smallint,
      max_players smallint, map text, ping_ms smallint)
    ON CONFLICT DO NOTHING`;
}

export type BatchOutcome =
  | { serverId: number; kind: 'answered'; status: ServerStatus; pingMs: number | null }
  | { serverId: number; kind: 'failed'; code: string }
  /** Refused by the address policy at send time: flagged, not queried, not sampled. */
  | { serverId: number; kind: 'refused'; isRelay: boolean };

export interface BatchWrite {
  crawlId: number;
  crawlAt: Date;
  batchKey: string;
  offlineAfterFailures: number;
  outcomes: BatchOutcome[];
}

export interface BatchWriteResult {
  duplicate: boolean;
  answered: number;
  failed: number;
  written: number;
}

export async function writeBatchOutcomes(db: Db, w: BatchWrite): Promise<BatchWriteResult> {
  return db.$transaction(async (tx) => {
    const claimed = await tx.$queryRaw<{ run_id: number | null }[]>`
      UPDATE crawl_batch SET done_at = now() WHERE crawl_id = ${w.crawlId} AND batch_key = ${w.batchKey} AND done_at IS NULL
      RETURNING run_id`;
    const claim = claimed[0];
    if (claim === undefined) return { duplicate: true, answered: 0, failed: 0, written: 0 };
    await lockServers(tx, w.outcomes.map((o) => o.serverId));

    const answered: StateWrite[] = [];
    const failed: { id: number; code: string }[] = [];
    const refused: { id: number; is_relay: boolean }[] = [];
    const samples: SampleRow[] = [];
    for (const o of w.outcomes) {
      if (o.kind === 'answered') {
        answered.push({ id: o.serverId, status: o.status, pingMs: o.pingMs });
        samples.push(sampleOf(o.serverId, o.status, o.pingMs));
      } else if (o.kind === 'failed') {
        failed.push({ id: o.serverId, code: cleanText(o.code) });
        samples.push(sampleOf(o.serverId, null, null));
      } else {
        refused.push({ id: o.serverId, is_relay: o.isRelay });
      }
    }
    if (answered.length > 0) await applyStates(tx, answered, false);
    if (failed.length > 0) {
      // N failures in a row: OFFLINE, with the last good state left as it was.
      const input = JSON.stringify(failed);
      await tx.$executeRaw`
        UPDATE game_server AS g SET
          consecutive_failures = g.consecutive_failures + 1,
          last_error = u.code,
          last_queried_at = now(),
          status = CASE WHEN g.status <> 'DELISTED' AND g.consecutive_failures + 1 >= ${w.offlineAfterFailures}
                        THEN 'OFFLINE'::"GameServerStatus" ELSE g.status END,
          updated_at = now()
        FROM jsonb_to_recordset(${input}::jsonb) AS u(id int, code text)
        WHERE g.id = u.id`;
    }
    if (refused.length > 0) {
      const input = JSON.stringify(refused);
      await tx.$executeRaw`
        UPDATE game_server AS g SET not_queryable = true, is_relay = u.is_relay, updated_at = now()
        FROM jsonb_to_recordset(${input}::jsonb) AS u(id int, is_relay boolean) WHERE g.id = u.id`;
    }
    const written = await insertSamples(tx, w.crawlId, w.crawlAt, samples);
    await tx.$executeRaw`
      UPDATE crawl SET queried = queried + ${answered.length + failed.length}, answered = answered + ${answered.length},
        failed = failed + ${failed.length}, written = written + ${written}
      WHERE id = ${w.crawlId}`;
    if (claim.run_id !== null) {
      await tx.$executeRaw`UPDATE crawl_run SET answered = answered + ${answered.length}, failed = failed + ${failed.length} WHERE id = ${claim.run_id}`;
    }
    return { duplicate: false, answered: answered.length, failed: failed.length, written };
  }, TX_OPTIONS);
}

/** One query outside any crawl (the API's requeryServer): current state and life cycle, no sample. */
export async function writeServerOutcome(db: Db, outcome: BatchOutcome, offlineAfterFailures: number): Promise<void> {
  await db.$transaction(async (tx) => {
    if (outcome.kind === 'answered') {
      await applyStates(tx, [{ id: outcome.serverId, status: outcome.status, pingMs: outcome.pingMs }], false);
    } else if (outcome.kind === 'failed') {
      await tx.$executeRaw`
        UPDATE game_server SET consecutive_failures = consecutive_failures + 1, last_error = ${cleanText(outcome.code)},
          last_queried_at = now(), updated_at = now(),
          status = CASE WHEN status <> 'DELISTED' AND consecutive_failures + 1 >= ${offlineAfterFailures}
                        THEN 'OFFLINE'::"GameServerStatus" ELSE status END
        WHERE id = ${outcome.serverId}`;
    } else {
      await tx.$executeRaw`UPDATE game_server SET not_queryable = true, is_relay = ${outcome.isRelay}, updated_at = now() WHERE id = ${outcome.serverId}`;
    }
  }, TX_OPTIONS);
}
