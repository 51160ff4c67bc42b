/**
 * One entry point for any single-packet A2S reply: reads the type byte and dispatches to the
 * codec for it. Split fragments must be reassembled first (split-packet.ts).
 */
import {
  A2A_ACK,
  S2A_INFO_DETAILED,
  S2A_INFO_SRC,
  S2A_PLAYER,
  S2A_RULES,
  S2C_CHALLENGE,
} from "./constants";
import { decodeChallengeResponse, type ChallengeValue } from "./a2s-challenge";
import { decodeInfoResponse, type A2SInfo } from "./a2s-info";
import { decodePlayersResponse, type DecodeContext, type PlayersResult } from "./a2s-player";
import { decodeRulesResponse, type RulesResult } from "./a2s-rules";
import { decodePingResponse } from "./a2a-ping";
import { openSinglePacket } from "./single-packet";

/** Any decoded single-packet reply, discriminated by `kind` (the `gsindex decode` JSON shape). */
export type A2SResponse =
  | { kind: "info"; value: A2SInfo }
  | { kind: "players"; value: PlayersResult }
  | { kind: "rules"; value: RulesResult }
  | { kind: "challenge"; value: ChallengeValue }
  | { kind: "ping"; value: Record<string, never> };

/** 'info' | 'players' | 'rules' | 'challenge' | 'ping'. */
export type A2SResponseKind = A2SResponse["kind"];

const RESPONSE_TYPES = [
  S2A_INFO_SRC,
  S2A_INFO_DETAILED,
  S2A_PLAYER,
  S2A_RULES,
  S2C_CHALLENGE,
  A2A_ACK,
];

/** Decodes a full single payload (FF FF FF FF + type + body). Throws ProtocolError on anything else. */
export function decodeResponse(payload: Buffer, context: DecodeContext = {}): A2SResponse {
  const { type } = openSinglePacket(payload, RESPONSE_TYPES, "A2S reply");
  switch (type) {
    case S2A_INFO_SRC:
    case S2A_INFO_DETAILED:
      return { kind: "info", value: decodeInfoResponse(payload) };
    case S2A_PLAYER:
      return { kind: "players", value: decodePlayersResponse(payload, context) };
    case S2A_RULES:
      return { kind: "rules", value: decodeRulesResponse(payload) };
    case S2C_CHALLENGE:
      return { kind: "challenge", value: decodeChallengeResponse(payload) };
    default:
      return { kind: "ping", value: decodePingResponse(payload) };
  }
}
