/**
 * An answer as the answer update takes it (server-store.ts applyStates): its row of the update's input,
 * encoded once, as soon as the answer is in. A query batch holds every answer until its slowest server is
 * done and its write has run, so each held answer outlives the young generation's collections. Held as
 * decoded, an answer is dozens of objects (the status, its player list, each player and name) that the
 * collector copies out of the young generation and traces again in the old one; encoded, it is one string
 * and its rules packed in one more (held-rules.ts), which the collector copies but never traces (issue 14
 * items 2 and 3).
 *
 * The row's rules, raw values and whether they are kept depend on the row as stored (its rules digest, read
 * when the write locks the rows): they are the last values of every row (state-input.ts) and are added at
 * the write, after the encoded head.
 */
import {
  answerFakeReasons,
  DEFAULT_FAKE_PLAYER_RULES,
  type FakePlayerRules,
} from "../fake-players";
import { PackedRules, type HeldRules, type HeldStatus } from "./held-rules";
import { answeredPlayerCount, type PlayerCountSource } from "./player-count";
import { rulesDigestOf, type RulesDigest } from "./rules-digest";
import { sampleOf, type SampleRow } from "./sample-store";
import { clampInt, cleanJson, cleanText, INT_MAX } from "./sanitize";
import { stateRowJson, stateRowHead } from "./state-input";

/** An answer to write as a server's current state. */
export interface StateWrite {
  id: number;
  status: HeldStatus;
  pingMs: number | null;
  /** Set for a list source's own record; a server's own answer: answeredPlayerCount. */
  playersSource?: PlayerCountSource;
}

export interface EncodedAnswer {
  readonly id: number;
  /** The row's values before its rules part, as state-input.ts stateRowHead encodes them. */
  readonly head: string;
  readonly rules: HeldRules;
  readonly raw: Record<string, string> | null;
  /** Of its rules and raw values, as stored (rules-digest.ts). */
  readonly digest: RulesDigest;
  /** Its sample (server_sample): written for a crawl's answer and a management record. */
  readonly sample: SampleRow;
}

const SERVER_TYPE_CODE = { dedicated: "d", listen: "l", proxy: "p" } as const;

export function encodeAnswer(
  s: StateWrite,
  rules: FakePlayerRules = DEFAULT_FAKE_PLAYER_RULES,
): EncodedAnswer {
  const st = s.status;
  const count = s.playersSource
    ? { players: st.players, source: s.playersSource }
    : answeredPlayerCount(st);
  const playerList = cleanJson(st.playerList);
  const heldRules =
    st.rules instanceof PackedRules || st.rules.length === 0 ? st.rules : PackedRules.of(st.rules);
  const digest = rulesDigestOf({ rules: heldRules, raw: st.raw });
  const head = stateRowHead({
    id: s.id,
    name: cleanText(st.name),
    map: cleanText(st.map),
    folder: cleanText(st.folder),
    game: cleanText(st.game),
    app_id: clampInt(st.appId, -INT_MAX, INT_MAX),
    game_id: cleanText(st.gameId),
    players: clampInt(count.players, 0, INT_MAX) ?? 0,
    players_source: count.source,
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
    rules_digest: digest,
    player_names: playerList
      .map((p) => p.name)
      .filter((n) => n !== "")
      .join("\n"),
    fake_reasons: answerFakeReasons(st, rules),
  });
  return {
    id: s.id,
    head,
    rules: heldRules,
    raw: st.raw,
    digest,
    sample: sampleOf(s.id, st, s.pingMs, s.playersSource !== undefined),
  };
}

/**
 * The answer's row of the update's input. Rules the row holds already (the same digest) are left out of it:
 * the update keeps the stored ones.
 */
export function answerRowJson(
  a: EncodedAnswer,
  storedDigest: RulesDigest | null | undefined,
): string {
  const kept = a.digest === storedDigest;
  if (kept) return stateRowJson(a.head, null, null, true);
  const rules = a.rules instanceof PackedRules ? a.rules.list() : cleanJson(a.rules);
  return stateRowJson(a.head, rules, a.raw === null ? null : cleanJson(a.raw), false);
}
