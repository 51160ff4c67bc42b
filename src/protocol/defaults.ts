/** Every default of the protocol library in one place. Durations are milliseconds. */
export const DEFAULT_TIMEOUT_MS = 3000;
export const DEFAULT_RETRIES = 1;
/** How many challenge rounds a query accepts before giving up with CHALLENGE_LOOP. */
export const MAX_CHALLENGE_ROUNDS = 3;
/** Fragment caps from the spec: GoldSrc's nibble holds 15, Source's byte 255. */
export const MAX_GOLDSRC_FRAGMENTS = 15;
export const MAX_SOURCE_FRAGMENTS = 255;
/** A decompressed split response larger than this is refused (DECOMPRESSION). */
export const MAX_DECOMPRESSED_BYTES = 1024 * 1024;
/** Largest UDP payload over IPv4. */
export const MAX_DATAGRAM_BYTES = 65507;
export const DEFAULT_A2S_PORT = 27015;
