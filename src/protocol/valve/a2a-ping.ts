/**
 * A2A_PING (0x69) and its reply A2A_ACK (0x6A). Deprecated; many servers ignore it. Spec: Valve's "Server Queries"
 * page; docs/protocols.md "Deprecated requests".
 *
 * Request: FF FF FF FF 69. Reply: FF FF FF FF 6A then a string: GoldSrc sends "00000000000000\0"
 * (as the Server Queries page shows), Source servers an empty string or nothing; the content is not checked.
 */
import { PacketWriter } from "../wire/packet-writer";
import { A2A_ACK, A2A_PING, SINGLE_PACKET_HEADER } from "./constants";
import { openSinglePacket, startSinglePacket } from "./single-packet";

/** A2A_PING request: FF FF FF FF 69. */
export function encodePingRequest(): Buffer {
  return new PacketWriter().i32le(SINGLE_PACKET_HEADER).u8(A2A_PING).toBuffer();
}

/** Decodes an A2A_ACK reply; the value carries nothing. */
export function decodePingResponse(payload: Buffer): Record<string, never> {
  openSinglePacket(payload, [A2A_ACK], "A2A_ACK");
  return {};
}

/** The GoldSrc form the Server Queries page shows: 6A + fourteen '0' characters + NUL. */
export function encodePingResponse(): Buffer {
  return startSinglePacket(A2A_ACK).cstring("00000000000000").toBuffer();
}
