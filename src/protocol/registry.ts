/**
 * Every queried protocol, listed once. Each protocol is one module (protocols/<protocol>.ts: query,
 * normalisation to ServerStatus, decoding captures, per-game quirks); this table adds the default
 * ports from the games table (games.ts). The crawler, the CLI (`gsindex query --protocol`,
 * `gsindex decode --protocol`) and the simulator reach protocols through here only, so every
 * protocol, Valve A2S included, is treated alike. Adding a protocol: docs/protocols.md.
 */
import type { ProtocolModule } from "./adapter";
import { ProtocolError } from "./errors";
import { GAMES, type GameEntry } from "./games";
import type { LegacyGameQuirks, LegacyProtocol } from "./legacy/quirks";
import { aseProtocol } from "./protocols/ase";
import { doom3Protocol } from "./protocols/doom3";
import { gamespy1Protocol } from "./protocols/gamespy1";
import { gamespy2Protocol } from "./protocols/gamespy2";
import { gamespy3Protocol } from "./protocols/gamespy3";
import { halflifeProtocol } from "./protocols/halflife";
import { quake2Protocol } from "./protocols/quake2";
import { quake3Protocol } from "./protocols/quake3";
import { sourceProtocol } from "./protocols/source";
import type { ProtocolId, ServerStatus } from "./status";

/** The protocols a server can be queried with ('bomberman' servers report their own state). */
export type QueryableProtocolId = Exclude<ProtocolId, "bomberman">;

/** Query options every protocol takes. */
export type { ProtocolQueryOptions as RegistryQueryOptions } from "./adapter";

export interface ProtocolAdapter extends ProtocolModule {
  id: QueryableProtocolId;
  /** The protocol's usual game: the first game of the games table that speaks it. */
  defaultGame: GameEntry;
  /** The port queries go to when only the game port is known (the usual game's offset). */
  defaultQueryPort(gamePort: number): number;
}

const MODULES: Readonly<Record<QueryableProtocolId, ProtocolModule>> = {
  source: sourceProtocol,
  quake2: quake2Protocol,
  quake3: quake3Protocol,
  gamespy1: gamespy1Protocol,
  gamespy2: gamespy2Protocol,
  gamespy3: gamespy3Protocol,
  doom3: doom3Protocol,
  halflife: halflifeProtocol,
  ase: aseProtocol,
};

function withPorts(id: QueryableProtocolId, module: ProtocolModule): ProtocolAdapter {
  const game = GAMES.find((g) => g.protocol === id);
  if (game === undefined) throw new Error(`games.ts lists no game for protocol ${id}`);
  return {
    ...module,
    id,
    defaultGame: game,
    defaultQueryPort: (gamePort) => gamePort + (game.queryPortOffset ?? 0),
  };
}

export const PROTOCOL_REGISTRY: Readonly<Record<QueryableProtocolId, ProtocolAdapter>> =
  Object.fromEntries(
    Object.entries(MODULES).map(([id, module]) => [
      id,
      withPorts(id as QueryableProtocolId, module),
    ]),
  ) as Record<QueryableProtocolId, ProtocolAdapter>;

/** Every queried protocol, in the registry's order. */
export const QUERYABLE_PROTOCOL_IDS = Object.keys(MODULES) as readonly QueryableProtocolId[];

export function isQueryableProtocol(id: string): id is QueryableProtocolId {
  return Object.prototype.hasOwnProperty.call(PROTOCOL_REGISTRY, id);
}

/** The adapter of a protocol; NOT_SUPPORTED for protocols that are never queried ('bomberman'). */
export function protocolAdapter(id: ProtocolId | string): ProtocolAdapter {
  if (!isQueryableProtocol(id))
    throw new ProtocolError("NOT_SUPPORTED", `protocol '${id}' is not queried`);
  return PROTOCOL_REGISTRY[id];
}

/** Captured reply datagrams of one protocol → ServerStatus (`gsindex decode --protocol`, tests). */
export function decodeStatus(
  protocol: QueryableProtocolId,
  packets: readonly Buffer[],
): ServerStatus {
  const decode = PROTOCOL_REGISTRY[protocol].decodeStatus;
  if (decode === undefined)
    throw new ProtocolError("NOT_SUPPORTED", `protocol '${protocol}' has no capture decoder here`);
  return decode(packets);
}

/** The older protocols' decoder, by its former name. */
export const decodeLegacyStatus = (
  protocol: LegacyProtocol,
  packets: readonly Buffer[],
): ServerStatus => decodeStatus(protocol, packets);

/** The quirks a protocol's normalisation applies to a reply with these raw key/values. */
export function legacyQuirksFor(
  protocol: LegacyProtocol,
  raw: Readonly<Record<string, string>>,
): LegacyGameQuirks {
  return PROTOCOL_REGISTRY[protocol].quirksFor!(raw);
}
