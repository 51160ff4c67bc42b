/**
 * Valve A2S wire bytes, named as in Valve's "Server queries" page and seeds 000 / 004, so that
 * grepping the spec finds the code.
 */

/** Every single-packet request and response starts with this int32 (-1): FF FF FF FF. */
export const SINGLE_PACKET_HEADER = -1;
/** A fragment of a split response starts with this int32 (-2): FE FF FF FF. */
export const SPLIT_PACKET_HEADER = -2;

export const A2S_INFO = 0x54; // 'T'
export const S2A_INFO_SRC = 0x49; // 'I'
/** Obsolete GoldSrc info reply. */
export const S2A_INFO_DETAILED = 0x6d; // 'm'
export const A2S_PLAYER = 0x55; // 'U'
export const S2A_PLAYER = 0x44; // 'D'
export const A2S_RULES = 0x56; // 'V'
export const S2A_RULES = 0x45; // 'E'
export const S2C_CHALLENGE = 0x41; // 'A'
/** Deprecated challenge request; only a fallback for servers that ignore a -1 challenge. */
export const A2S_SERVERQUERY_GETCHALLENGE = 0x57; // 'W'
export const A2A_PING = 0x69; // 'i'
export const A2A_ACK = 0x6a; // 'j'

/** The NUL-terminated string an A2S_INFO request carries. */
export const A2S_INFO_PAYLOAD = "Source Engine Query";
/** The challenge value that asks the server for a challenge (FF FF FF FF). */
export const NO_CHALLENGE = Buffer.from([0xff, 0xff, 0xff, 0xff]);

/** Extra Data Flag bits of a Source A2S_INFO reply, in the order their fields follow. */
export const EDF_PORT = 0x80;
export const EDF_STEAM_ID = 0x10;
export const EDF_SOURCE_TV = 0x40;
export const EDF_KEYWORDS = 0x20;
export const EDF_GAME_ID = 0x01;

/** Split-id bit that says the reassembled payload is bzip2-compressed (Source layout only). */
export const SPLIT_COMPRESSED_BIT = 0x80000000;
/** Default Source split size (the 2-byte field), also the data bytes per fragment. */
export const DEFAULT_SOURCE_SPLIT_BYTES = 1248;
/** GoldSrc fragments are at most 1400 bytes on the wire; 9 of them are the header. */
export const DEFAULT_GOLDSRC_SPLIT_BYTES = 1391;
