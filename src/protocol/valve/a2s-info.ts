/**
 * A2S_INFO: request encoder and the reply codecs (Source 0x49 in info-source.ts, GoldSrc 0x6D in
 * info-goldsrc.ts). Spec: Valve's "Server Queries" page; docs/protocols.md "A2S_INFO".
 *
 * Request: FF FF FF FF 54 "Source Engine Query\0" [challenge: 4 bytes, after an S2C_CHALLENGE].
 */
import { PacketWriter } from "../wire/packet-writer";
import {
  A2S_INFO,
  A2S_INFO_PAYLOAD,
  S2A_INFO_DETAILED,
  S2A_INFO_SRC,
  SINGLE_PACKET_HEADER,
} from "./constants";
import { decodeGoldSrcInfoBody, encodeGoldSrcInfo, type GoldSrcInfo } from "./info-goldsrc";
import { decodeSourceInfoBody, encodeSourceInfo, type SourceInfo } from "./info-source";
import { encoding, openSinglePacket, requestWithChallenge } from "./single-packet";

/** A decoded A2S_INFO reply; `type` tells the Source (0x49) form from the GoldSrc (0x6D) one. */
export type A2SInfo = SourceInfo | GoldSrcInfo;

/** FF FF FF FF 54 "Source Engine Query" NUL: the request without a challenge. */
const INFO_REQUEST = new PacketWriter()
  .i32le(SINGLE_PACKET_HEADER)
  .u8(A2S_INFO)
  .cstring(A2S_INFO_PAYLOAD)
  .toBuffer();

/** A2S_INFO request; `challenge` is the 4 bytes of an S2C_CHALLENGE, echoed verbatim. */
export function encodeInfoRequest(challenge?: Buffer): Buffer {
  // A copy: the caller owns what it gets.
  if (challenge === undefined) return Buffer.from(INFO_REQUEST);
  return requestWithChallenge(INFO_REQUEST, challenge);
}

/** Decodes a Source (0x49) or GoldSrc (0x6D) A2S_INFO reply from a full single payload. */
export function decodeInfoResponse(payload: Buffer): A2SInfo {
  const { reader, type } = openSinglePacket(
    payload,
    [S2A_INFO_SRC, S2A_INFO_DETAILED],
    "A2S_INFO reply",
  );
  return type === S2A_INFO_SRC ? decodeSourceInfoBody(reader) : decodeGoldSrcInfoBody(reader);
}

/** Encodes an A2S_INFO reply in the form `info.type` says. */
export function encodeInfoResponse(info: A2SInfo): Buffer {
  return encoding("A2S_INFO reply", () =>
    info.type === "source" ? encodeSourceInfo(info) : encodeGoldSrcInfo(info),
  );
}
