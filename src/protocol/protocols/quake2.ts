/**
 * Quake 2 family (`status` → `print`): Quake 2, Quake II mods, SOF1, Kingpin. Normalised with the
 * Quake family rules of quake3.ts. Codec: legacy/quake3.ts.
 */
import { onlyDatagram } from "../adapter";
import type { ProtocolModule, ProtocolQueryOptions, ServedState } from "../adapter";
import {
  decodeQuakeResponse,
  encodeQuake2StatusRequest,
  encodeQuakeResponse,
} from "../legacy/quake3";
import type { QuakeResponse } from "../legacy/quake3";
import { WHOLE_DATAGRAM, collect, single, withSession } from "../legacy/query-kit";
import type { LegacyQueryOptions, LegacyQueryResult } from "../legacy/query-kit";
import { DEFAULT_QUIRKS, quirksFrom } from "../legacy/quirks";
import type { LegacyGameQuirks, QuirkEntry } from "../legacy/quirks";
import { OOB, kv, startsWith } from "../legacy/serve-kit";
import type { ServerAddress } from "../types";
import { quakeToStatus } from "./quake3";

export const QUIRKS: readonly QuirkEntry[] = [
  { quirks: { ...DEFAULT_QUIRKS, game: "quake2" }, matches: () => true },
];

const quirksOf = (raw: Readonly<Record<string, string>>): LegacyGameQuirks =>
  quirksFrom(QUIRKS, raw);

/** Quake 2 family `status` → `print`. */
export function queryQuake2(
  address: ServerAddress,
  options: LegacyQueryOptions = {},
): Promise<LegacyQueryResult<QuakeResponse>> {
  return withSession(address, options, (session, budget) =>
    collect(
      session,
      encodeQuake2StatusRequest(),
      budget,
      single(decodeQuakeResponse),
      1,
      WHOLE_DATAGRAM,
    ),
  );
}

/** The server side: `status` answered from the served state. */
function answer(request: Buffer, s: ServedState): Buffer[] | null {
  const text = startsWith(request, OOB)
    ? request
        .subarray(4)
        .toString("latin1")
        .replace(/[\0\n]+$/, "")
    : "";
  const [command] = text.split(" ");
  if (command !== "status") return null;
  const info = [
    kv("hostname", s.name),
    kv("mapname", s.map),
    kv("maxclients", s.maxPlayers),
    kv("needpass", s.passwordProtected),
    kv("gamename", s.folder),
    kv("version", s.version),
  ];
  const players = s.playerList.map((p) => ({
    numbers: [p.score, p.pingMs],
    name: p.name,
    afterName: "",
  }));
  return [encodeQuakeResponse({ header: "print", prefixByte: null, info, players })];
}

/** Quake 2. */
export const quake2Protocol: ProtocolModule = {
  id: "quake2",
  name: "Quake 2",
  queryStatus: async (address, options: ProtocolQueryOptions = {}) => {
    const r = await queryQuake2(address, options);
    return {
      ...quakeToStatus(r.reply, "quake2", quirksOf),
      pingMs: r.pingMs,
      ...(r.partial ? { partial: true } : {}),
    };
  },
  decodeStatus: (packets) =>
    quakeToStatus(decodeQuakeResponse(onlyDatagram(packets, "quake2")), "quake2", quirksOf),
  quirksFor: (raw) => quirksFrom(QUIRKS, raw),
  answer,
};
