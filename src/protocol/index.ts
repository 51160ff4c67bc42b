/**
 * The public entry of the protocol library: everything outside src/protocol imports from here.
 * A list of re-exports only; each module documents its own exports.
 */
export * from "./errors";
export * from "./types";
export {
  PROTOCOL_IDS,
  type ProtocolId,
  type ServerStatus,
  type StatusPlayer,
  type StatusRule,
} from "./status";
export * from "./defaults";
export { linkAbort } from "./abort-link";
export { startDeadline, type Deadline } from "./master/deadline";
export * from "./valve/constants";
export {
  encodeInfoRequest,
  decodeInfoResponse,
  encodeInfoResponse,
  type A2SInfo,
} from "./valve/a2s-info";
export type { SourceInfo, TheShipInfo } from "./valve/info-source";
export type { GoldSrcInfo, GoldSrcMod } from "./valve/info-goldsrc";
export {
  encodePlayerRequest,
  decodePlayersResponse,
  encodePlayersResponse,
  type Player,
  type PlayersResult,
  type DecodeContext,
} from "./valve/a2s-player";
export {
  encodeRulesRequest,
  decodeRulesResponse,
  encodeRulesResponse,
  type Rule,
  type RulesResult,
} from "./valve/a2s-rules";
export { serverQueryToStatus } from "./valve/server-status";
export {
  encodeGetChallengeRequest,
  decodeChallengeResponse,
  encodeChallengeResponse,
  type ChallengeValue,
} from "./valve/a2s-challenge";
export { encodePingRequest, decodePingResponse, encodePingResponse } from "./valve/a2a-ping";
export { decodeResponse, type A2SResponse, type A2SResponseKind } from "./valve/a2s-response";
export { decodeRequest, type A2SRequest, type A2SRequestKind } from "./valve/a2s-request";
export { SplitAssembler, type SplitAssemblerOptions } from "./valve/split-packet";
export { decodeDatagrams } from "./valve/decode-datagrams";
export { quirksFor, type AppQuirks, type PlayerLayout } from "./valve/quirks";
export { decompressBzip2 } from "./wire/decompress";
export { PacketWriter } from "./wire/packet-writer";
export {
  queryInfo,
  queryPlayers,
  queryRules,
  queryPing,
  queryServer,
  type A2SQueryOptions,
  type PlayersQueryOptions,
  type InfoAnswer,
  type ServerQueryPart,
  type ServerQueryResult,
} from "./valve/client";
export { defaultTransport } from "./transport/default-transport";
export { ipLiteralLookup } from "./transport/ip-literal-lookup";
export {
  UdpTransport,
  canonicalIp,
  type DatagramAssembler,
  type HandlerResult,
  type ExchangeOptions,
  type ExchangeResult,
  type RemoteSession,
  type UdpTransportOptions,
  type UdpTransportStats,
} from "./transport/udp-transport";
// Older protocols: codecs (legacy/), their queries and normalisation (protocols/, one module each).
export * as quake from "./legacy/quake3";
export * as gamespy1 from "./legacy/gamespy1";
export * as gamespy2 from "./legacy/gamespy2";
export * as gamespy3 from "./legacy/gamespy3";
export * as doom3 from "./legacy/doom3";
export * as halflife from "./legacy/halflife";
export * as ase from "./legacy/ase";
export { stripColorCodes, cleanText, type ColorFamily } from "./legacy/color-codes";
export {
  DEFAULT_QUIRKS,
  quirksFrom,
  type LegacyProtocol,
  type LegacyGameQuirks,
  type QuirkEntry,
} from "./legacy/quirks";
export type { LegacyDecodeOptions, TextEncoding, KeyValue } from "./legacy/text";
export type { LegacyQueryOptions, LegacyQueryResult } from "./legacy/query-kit";
export { queryQuake3, quakeToStatus, type Quake3QueryOptions } from "./protocols/quake3";
export { queryQuake2 } from "./protocols/quake2";
export { queryGamespy1, gamespy1ToStatus } from "./protocols/gamespy1";
export { queryGamespy2, gamespy2ToStatus } from "./protocols/gamespy2";
export {
  queryGamespy3,
  gamespy3ToStatus,
  jc2mpToStatus,
  type Gamespy3QueryOptions,
  type Gamespy3Reply,
} from "./protocols/gamespy3";
export { queryDoom3, doom3ToStatus } from "./protocols/doom3";
export { queryHalfLife, halfLifeToStatus, type HalfLifeQueryResult } from "./protocols/halflife";
export { queryAse, aseToStatus } from "./protocols/ase";
// One registry of protocols and one table of games: what the crawler, the CLI and the simulator use.
export type { ProtocolModule, ProtocolQueryOptions, ServedState, AnswerContext } from "./adapter";
export { GAMES, gameById, queryPortOf, type GameEntry } from "./games";
export {
  PROTOCOL_REGISTRY,
  QUERYABLE_PROTOCOL_IDS,
  protocolAdapter,
  isQueryableProtocol,
  decodeStatus,
  decodeLegacyStatus,
  legacyQuirksFor,
  type ProtocolAdapter,
  type QueryableProtocolId,
  type RegistryQueryOptions,
} from "./registry";
export {
  QUAKE3_PROTOCOL_VERSION,
  listQuake3Master,
  encodeQuake3MasterRequest,
  decodeQuake3MasterResponse,
  encodeQuake3MasterResponse,
  type Quake3MasterListOptions,
  type Quake3MasterListResult,
} from "./master/quake3-master";
// List sources: the Valve master, the Steam Web API, management servers.
export {
  MasterFilter,
  buildMasterFilter,
  formatMasterFilter,
  parseMasterFilter,
  assertMasterFilterLength,
  masterFilterBytes,
  type MasterFilterNode,
  type MasterFilterPair,
  type MasterFilterGroup,
  type MasterFilterCombinator,
} from "./master/master-filter";
export {
  MASTER_REGIONS,
  ALL_MASTER_REGION_CODES,
  FIRST_SEED,
  A2M_GET_SERVERS_BATCH2,
  M2A_SERVER_BATCH_HEADER,
  encodeMasterQuery,
  decodeMasterQuery,
  encodeMasterResponse,
  decodeMasterResponse,
  formatAddress,
  parseIpv4Address,
  isMasterRegionCode,
  masterRegionName,
  type MasterRegionName,
  type MasterQuery,
  type MasterBatch,
} from "./master/valve-master-codec";
export {
  listValveMaster,
  type ValveMasterListOptions,
  type ValveMasterListResult,
  type MasterPacing,
} from "./master/valve-master";
export {
  listSteamWebApi,
  parseRetryAfterMs,
  type SteamWebApiListOptions,
  type SteamWebApiListResult,
} from "./master/steam-web-api";
export { readSteamWebApiRecord, type SteamWebApiServer } from "./master/steam-web-api-record";
export {
  MS_REGISTER_GAME_SERVER,
  MS_UPDATE_GAME_SERVER_STATS,
  MS_UNREGISTER_GAME_SERVER,
  MS_QUERY_GAME_SERVERS,
  MS_R_QUERY_GAME_SERVERS,
  classifyServerAddress,
  parseManagementRequest,
  encodeQueryGameServersReply,
  readQueryGameServersReply,
  type ManagementServerEntry,
  type ManagementPlayers,
  type ManagementRegistration,
  type ManagementStats,
  type ManagementRequest,
  type GameplayMode,
  type QueryGameServersReply,
  type ServerAddressKind,
} from "./master/management-messages";
export {
  queryManagementServer,
  JsonObjectFramer,
  type ManagementQueryOptions,
} from "./master/management-client";
export { managementEntryToStatus, GAMEPLAY_MODE_NAMES } from "./master/management-status";
