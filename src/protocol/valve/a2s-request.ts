/**
 * Decodes the requests a client sends, for the simulator (the server side). Accepts exactly the
 * forms real clients send: INFO with or without a 4-byte challenge after its string; PLAYER and
 * RULES with a 4-byte challenge (FF FF FF FF, or nothing at all from very old clients, means "give
 * me one"); W; the ping. Anything else is a ProtocolError.
 */
import { ProtocolError } from "../errors";
import {
  A2A_PING,
  A2S_INFO,
  A2S_INFO_PAYLOAD,
  A2S_PLAYER,
  A2S_RULES,
  A2S_SERVERQUERY_GETCHALLENGE,
  NO_CHALLENGE,
} from "./constants";
import { openSinglePacket } from "./single-packet";

/** What a client asked for. */
export type A2SRequestKind = "info" | "players" | "rules" | "getchallenge" | "ping";

/** A decoded request (the server side of the protocol). */
export interface A2SRequest {
  kind: A2SRequestKind;
  /** The 4 challenge bytes the client echoed; absent when it sent none or FF FF FF FF. */
  challenge?: Buffer;
}

function challengeOf(rest: Buffer, offset: number, what: string): Buffer | undefined {
  if (rest.length === 0) return undefined;
  if (rest.length !== 4)
    throw new ProtocolError("MALFORMED", `${what}: challenge must be 4 bytes, got ${rest.length}`, {
      offset,
    });
  return rest.equals(NO_CHALLENGE) ? undefined : Buffer.from(rest);
}

/** Decodes a request datagram; throws ProtocolError (MALFORMED, TRUNCATED, UNEXPECTED_RESPONSE) on anything else. */
export function decodeRequest(payload: Buffer): A2SRequest {
  const { reader, type } = openSinglePacket(
    payload,
    [A2S_INFO, A2S_PLAYER, A2S_RULES, A2S_SERVERQUERY_GETCHALLENGE, A2A_PING],
    "A2S request",
  );
  switch (type) {
    case A2S_INFO: {
      const text = reader.cstringLatin1("A2S_INFO payload");
      if (text !== A2S_INFO_PAYLOAD)
        throw new ProtocolError(
          "MALFORMED",
          `A2S_INFO payload is ${JSON.stringify(text)}, not "${A2S_INFO_PAYLOAD}"`,
          { offset: 5 },
        );
      const offset = reader.offset;
      const challenge = challengeOf(reader.rest(), offset, "A2S_INFO");
      return challenge === undefined ? { kind: "info" } : { kind: "info", challenge };
    }
    case A2S_PLAYER:
    case A2S_RULES: {
      const kind = type === A2S_PLAYER ? "players" : "rules";
      const challenge = challengeOf(
        reader.rest(),
        5,
        kind === "players" ? "A2S_PLAYER" : "A2S_RULES",
      );
      return challenge === undefined ? { kind } : { kind, challenge };
    }
    case A2S_SERVERQUERY_GETCHALLENGE:
      return { kind: "getchallenge" };
    default:
      return { kind: "ping" };
  }
}
