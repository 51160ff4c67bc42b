/**
 * The three contenders, each wrapped to the same call: query INFO + PLAYER + RULES of one server.
 * query() keeps what the library returned as it is; answer() turns it into an Answer after the clock
 * has stopped, so the measured CPU is the library's, not the bench's reshaping. Each runs in its own
 * process (contender.ts), so only one is loaded at a time.
 */
import { packageVersion as versionOf } from "../lib/packages";
import type { Answer } from "./answer";

export type ContenderId = "gsindex" | "gamedig" | "fabricio";

export interface Contender {
  id: ContenderId;
  /** Package and version as reported. */
  label: string;
  /** What the library returned (or an Answer with the error it threw). */
  query(host: string, port: number): Promise<unknown>;
  /** A query()'s result as an Answer; called after the measured section. */
  answer(raw: unknown): Answer;
  /**
   * Whether answer(raw) would carry an error, without building it: cheap enough to run inside the
   * measured section when a pass keeps no answers (contender.ts, `--answers count`).
   */
  failed(raw: unknown): boolean;
  close(): Promise<void>;
}

/**
 * One retry policy, given to every contender in its own terms: each request datagram is sent up to
 * `sends` times, `sendWaitMs` apart, and the request fails after the last wait. How each library's
 * options map onto it (read from their code, gamedig 5.3 lib/QueryRunner.js and protocols/core.js,
 * valve-server-query 2.x lib/main/connection.js):
 * - gsindex: `retries` is re-sends per request and `timeoutMs` bounds one part (INFO, PLAYER or RULES)
 *   with its challenge rounds; each send waits timeoutMs / (retries + 1). So timeoutMs = sends x
 *   sendWaitMs, retries = sends - 1. (PLAYER and RULES give their first request half of that, to keep
 *   time for the `W` fallback: gsindex's own choice, left as is.)
 * - GameDig: a UDP request is sent once and waits `socketTimeout`; it never re-sends a request.
 *   `maxRetries` is the number of attempts in total (1 = no retry; 0 also means 1), each attempt
 *   re-running the whole query from INFO, and `attemptTimeout` caps one attempt. So socketTimeout =
 *   sendWaitMs, maxRetries = sends (every request is sent at most `sends` times, the earlier ones of
 *   the query again with it), attemptTimeout = 3 x sends x sendWaitMs (gsindex's worst case for the
 *   three parts, so it never cuts an attempt gsindex would let finish).
 * - valve-server-query: `timeout` is per request; it sends, re-sends once at timeout / 2 and fails at
 *   timeout. Its sends are fixed at 2, so timeout = 2 x sendWaitMs (the bench uses sends = 2).
 */
export interface ContenderOptions {
  sendWaitMs: number;
  sends: number;
}

function isError(raw: unknown): raw is Answer {
  return typeof raw === "object" && raw !== null && "error" in raw && Object.keys(raw).length === 1;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return `${(err as { code?: string }).code ?? err.name}: ${err.message}`;
  return String(err);
}

function makeGsindex(options: ContenderOptions): Contender {
  const { queryServer, UdpTransport } =
    require("../../src/protocol") as typeof import("../../src/protocol");
  const transport = new UdpTransport();
  return {
    id: "gsindex",
    label: "gsindex queryServer (src/protocol)",
    query: (host, port) =>
      queryServer(
        { host, port },
        { timeoutMs: options.sendWaitMs * options.sends, retries: options.sends - 1, transport },
      ),
    answer(raw) {
      if (isError(raw)) return raw;
      const r = raw as Awaited<ReturnType<typeof queryServer>>;
      const answer: Answer = {};
      const info = r.info?.info;
      if (info)
        answer.info = {
          name: info.name,
          map: info.map,
          folder: info.folder,
          game: info.game,
          players: info.players,
          maxPlayers: info.maxPlayers,
        };
      if (r.players)
        answer.players = r.players.players.map((p) => ({ name: p.name, score: p.score }));
      if (r.rules)
        answer.rules = Object.fromEntries(r.rules.rules.map((rule) => [rule.name, rule.value]));
      const errors = Object.entries(r.errors).map(([part, e]) => `${part} ${e.code}`);
      if (errors.length > 0) answer.error = errors.join(", ");
      return answer;
    },
    failed(raw) {
      if (isError(raw)) return true;
      // Any entry, as answer() counts them, without building the list.
      for (const _part in (raw as Awaited<ReturnType<typeof queryServer>>).errors) return true;
      return false;
    },
    async close() {
      await transport.close();
    },
  };
}

interface GameDigPlayer {
  name?: string;
  raw?: { score?: number };
}
interface GameDigState {
  name: string;
  map: string;
  numplayers: number;
  maxplayers: number;
  players: GameDigPlayer[];
  bots: GameDigPlayer[];
  raw: { folder?: string; game?: string; rules?: Record<string, string> };
}
interface GameDigInstance {
  query(options: Record<string, unknown>): Promise<GameDigState>;
}

function makeGameDig(options: ContenderOptions): Contender {
  // gamedig 5 is an ES module; Node 20.19+ loads it through require().
  const { GameDig } = require("gamedig") as { GameDig: new () => GameDigInstance };
  const gamedig = new GameDig();
  return {
    id: "gamedig",
    label: `gamedig ${versionOf("gamedig")}`,
    async query(host, port) {
      try {
        return await gamedig.query({
          type: "protocol-valve",
          host,
          port,
          givenPortOnly: true,
          requestRules: true,
          requestRulesRequired: true,
          requestPlayersRequired: true,
          socketTimeout: options.sendWaitMs,
          attemptTimeout: 3 * options.sends * options.sendWaitMs,
          maxRetries: options.sends,
        });
      } catch (err) {
        return { error: errorText(err) };
      }
    },
    answer(raw) {
      if (isError(raw)) return raw;
      const s = raw as GameDigState;
      const everyone = [...s.players, ...s.bots];
      return {
        info: {
          name: s.name,
          map: s.map,
          folder: s.raw.folder ?? "",
          game: s.raw.game ?? "",
          players: s.numplayers,
          maxPlayers: s.maxplayers,
        },
        players: everyone.map((p) => ({ name: p.name ?? "", score: p.raw?.score ?? NaN })),
        rules: s.raw.rules ?? {},
      };
    },
    failed: isError,
    async close() {
      // GameDig's global socket is unref'd.
    },
  };
}

interface FabricioInfo {
  name: string;
  map: string;
  folder: string;
  game: string;
  players: { online: number; max: number };
}
interface FabricioServer {
  getInfo(): Promise<FabricioInfo>;
  getPlayers(): Promise<Array<{ name: string; score: number }>>;
  getRules(): Promise<Record<string, string | number | boolean>>;
  disconnect(): void;
}

function makeFabricio(options: ContenderOptions): Contender {
  const { Server } = require("@fabricio-191/valve-server-query") as {
    Server: (o: Record<string, unknown>) => Promise<FabricioServer>;
  };
  return {
    id: "fabricio",
    label: `@fabricio-191/valve-server-query ${versionOf("@fabricio-191/valve-server-query")}`,
    async query(host, port) {
      let server: FabricioServer | null = null;
      const raw: {
        info?: FabricioInfo;
        players?: Array<{ name: string; score: number }>;
        rules?: Record<string, string | number | boolean>;
        error?: string;
      } = {};
      try {
        // Its documented use: connect (which asks INFO once to learn the challenge mode), then ask.
        server = await Server({ ip: host, port, timeout: 2 * options.sendWaitMs });
        raw.info = await server.getInfo();
        raw.players = await server.getPlayers();
        raw.rules = await server.getRules();
      } catch (err) {
        raw.error = errorText(err);
      } finally {
        server?.disconnect();
      }
      return raw;
    },
    answer(value) {
      const raw = value as {
        info?: FabricioInfo;
        players?: Array<{ name: string; score: number }>;
        rules?: Record<string, string | number | boolean>;
        error?: string;
      };
      const answer: Answer = {};
      const info = raw.info;
      if (info)
        answer.info = {
          name: info.name,
          map: info.map,
          folder: info.folder,
          game: info.game,
          players: info.players.online,
          maxPlayers: info.players.max,
        };
      if (raw.players) answer.players = raw.players.map((p) => ({ name: p.name, score: p.score }));
      if (raw.rules)
        answer.rules = Object.fromEntries(
          Object.entries(raw.rules).map(([k, v]) => [
            k,
            typeof v === "boolean" ? (v ? "True" : "False") : String(v),
          ]),
        );
      if (raw.error !== undefined) answer.error = raw.error;
      return answer;
    },
    failed: (value) => (value as { error?: string }).error !== undefined,
    async close() {},
  };
}

export function makeContender(id: ContenderId, options: ContenderOptions): Contender {
  switch (id) {
    case "gsindex":
      return makeGsindex(options);
    case "gamedig":
      return makeGameDig(options);
    case "fabricio":
      return makeFabricio(options);
  }
}
