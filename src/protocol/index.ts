/**
 * The public entry of the protocol library: everything outside src/protocol imports from here.
 * A list of re-exports only; each module documents its own exports.
 */
export * from './errors';
export * from './types';
export * from './defaults';
export * from './valve/constants';
export { encodeInfoRequest, decodeInfoResponse, encodeInfoResponse, type A2SInfo } from './valve/a2s-info';
export type { SourceInfo, TheShipInfo } from './valve/info-source';
export type { GoldSrcInfo, GoldSrcMod } from './valve/info-goldsrc';
export { encodePlayerRequest, decodePlayersResponse, encodePlayersResponse, type Player, type PlayersResult, type DecodeContext } from './valve/a2s-player';
export { encodeRulesRequest, decodeRulesResponse, encodeRulesResponse, type Rule, type RulesResult } from './valve/a2s-rules';
export { encodeGetChallengeRequest, decodeChallengeResponse, encodeChallengeResponse, type ChallengeValue } from './valve/a2s-challenge';
export { encodePingRequest, decodePingResponse, encodePingResponse } from './valve/a2a-ping';
export { decodeResponse, type A2SResponse, type A2SResponseKind } from './valve/a2s-response';
export { decodeRequest, type A2SRequest, type A2SRequestKind } from './valve/a2s-request';
export { SplitAssembler, type SplitAssemblerOptions } from './valve/split-packet';
export { splitResponse, type SplitResponseOptions } from './valve/split-response';
export { decodeDatagrams } from './valve/decode-datagrams';
export { quirksFor, type AppQuirks, type PlayerLayout } from './valve/quirks';
export { decompressBzip2, compressBzip2 } from './wire/decompress';
export { queryInfo, queryPlayers, queryRules, queryPing, queryServer, defaultTransport, GOLDSRC_INFO_GRACE_MS, type A2SQueryOptions, type PlayersQueryOptions, type InfoAnswer, type ServerQueryPart, type ServerQueryResult } from './valve/client';
export { UdpTransport, canonicalIp, type DatagramAssembler, type HandlerResult, type ExchangeOptions, type ExchangeResult, type RemoteSession, type UdpTransportOptions, type UdpTransportStats } from './transport/udp-transport';
