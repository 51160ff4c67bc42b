/**
 * S2C_CHALLENGE (0x41) and the deprecated A2S_SERVERQUERY_GETCHALLENGE (0x57). Spec: Valve's "Server Queries" page;
 * docs/protocols.md "Deprecated requests".
 *
 * Request `W`: FF FF FF FF 57. Reply: FF FF FF FF 41 challenge(4 bytes), echoed back verbatim
 * after A2S_INFO's string or as A2S_PLAYER / A2S_RULES's challenge.
 */
import { PacketWriter } from "../wire/packet-writer";
import { A2S_SERVERQUERY_GETCHALLENGE, S2C_CHALLENGE, SINGLE_PACKET_HEADER } from "./constants";
import { assertChallenge, openSinglePacket, startSinglePacket } from "./single-packet";

/** A decoded S2C_CHALLENGE: JSON contract `{challenge, challengeHex}`. */
export interface ChallengeValue {
  /** The 4 bytes read as a little-endian int32, for display. */
  challenge: number;
  /** The 4 bytes to echo back, in hex. */
  challengeHex: string;
}

/** The deprecated A2S_SERVERQUERY_GETCHALLENGE request: FF FF FF FF 57. */
export function encodeGetChallengeRequest(): Buffer {
  return new PacketWriter().i32le(SINGLE_PACKET_HEADER).u8(A2S_SERVERQUERY_GETCHALLENGE).toBuffer();
}

/** Decodes FF FF FF FF 41 + 4 bytes; bytes after the challenge are ignored (some servers pad). */
export function decodeChallengeResponse(payload: Buffer): ChallengeValue {
  const { reader } = openSinglePacket(payload, [S2C_CHALLENGE], "S2C_CHALLENGE");
  const bytes = reader.bytes(4, "challenge");
  return { challenge: bytes.readInt32LE(0), challengeHex: bytes.toString("hex") };
}

/** S2C_CHALLENGE reply carrying the 4 bytes the client must echo (the simulator's side). */
export function encodeChallengeResponse(challenge: Buffer): Buffer {
  assertChallenge(challenge);
  return startSinglePacket(S2C_CHALLENGE).bytes(challenge).toBuffer();
}
