/** Every default of the protocol library in one place. Durations are milliseconds. */
export const DEFAULT_TIMEOUT_MS = 3000;
export const DEFAULT_RETRIES = 1;
/** How many challenge rounds a query accepts before giving up with CHALLENGE_LOOP. */
export const MAX_CHALLENGE_ROUNDS = 3;
/** Fragment caps of the split layouts: GoldSrc's nibble holds 15, Source's byte 255. */
export const MAX_GOLDSRC_FRAGMENTS = 15;
export const MAX_SOURCE_FRAGMENTS = 255;
/** A decompressed split response larger than this is refused (DECOMPRESSION). */
export const MAX_DECOMPRESSED_BYTES = 1024 * 1024;
/** Largest UDP payload over IPv4. */
export const MAX_DATAGRAM_BYTES = 65507;
export const DEFAULT_A2S_PORT = 27015;

// Master servers: the Valve master, the Steam Web API and the management servers (docs/protocols.md).
export const DEFAULT_VALVE_MASTER_HOST = "hl2master.steampowered.com";
export const DEFAULT_VALVE_MASTER_PORT = 27011;
/** The real master answers about 30 packets a minute per source IP, then goes silent; stay under it. */
export const DEFAULT_MASTER_REQUESTS_PER_MINUTE = 20;
/** How long one master request waits for its page before it is re-sent. */
export const DEFAULT_MASTER_TIMEOUT_MS = 3000;
/** Re-sends of one page request before the listing stops short (partial, resumable). */
export const DEFAULT_MASTER_RETRIES = 2;
/** Longest filter string the master accepts, in bytes (it rejects longer ones). */
export const MAX_MASTER_FILTER_BYTES = 190;
/** Addresses per master packet (1400-byte packets, 6-byte entries, 6-byte header). */
export const MASTER_ADDRESSES_PER_PACKET = 231;
/** Stop paging after this many pages of one region however the master behaves (loop guard). */
export const MAX_MASTER_PAGES = 100_000;
export const DEFAULT_STEAM_WEB_API_URL = "https://api.steampowered.com";
/** GetServerList returns at most this many servers per call. */
export const STEAM_WEB_API_MAX_PER_CALL = 10_000;
export const DEFAULT_STEAM_WEB_API_REQUESTS_PER_MINUTE = 60;
export const DEFAULT_STEAM_WEB_API_TIMEOUT_MS = 30_000;
/** A Retry-After longer than this is not waited for: the listing stops short instead. */
export const MAX_RETRY_AFTER_MS = 120_000;
/** The management server's TCP port. */
export const MANAGEMENT_SERVER_PORT = 51963;
export const DEFAULT_MANAGEMENT_TIMEOUT_MS = 3000;
/** A management message line longer than this is dropped unread. */
export const MAX_MANAGEMENT_LINE_BYTES = 16 * 1024;
/** After a GoldSrc `m` INFO reply, how long to wait for a Source `I` that may follow it. */
export const GOLDSRC_INFO_GRACE_MS = 100;
/** Receive buffer asked of the kernel for each transport socket (bursts of many servers' replies). */
export const DEFAULT_RECEIVE_BUFFER_BYTES = 4 * 1024 * 1024;
/** The Quake 3 master's port (ioquake3's master.ioquake3.org and the original id master). */
export const DEFAULT_QUAKE3_MASTER_PORT = 27950;
/** Addresses per Quake 3 master reply datagram when encoding one. */
export const QUAKE3_MASTER_ADDRESSES_PER_DATAGRAM = 200;
/** Re-tries of one Steam Web API call that failed (network, 5xx). */
export const DEFAULT_STEAM_WEB_API_RETRIES = 2;
/** Re-tries of one Steam Web API call the endpoint rate-limited (429). */
export const DEFAULT_STEAM_WEB_API_RATE_LIMITED_RETRIES = 5;
/** First back-off after a failed Steam Web API call; doubled per failure. */
export const DEFAULT_STEAM_WEB_API_RETRY_DELAY_MS = 1000;
/** Wait after a 429 that names no Retry-After. */
export const DEFAULT_RETRY_AFTER_MS = 60_000;
/** Loop guard: calls one Steam Web API listing makes at most. */
export const DEFAULT_STEAM_WEB_API_MAX_CALLS = 2000;
/** A management server's reply larger than this is refused. */
export const MAX_MANAGEMENT_REPLY_BYTES = 8 * 1024 * 1024;
/** How many split responses (distinct ids) one SplitAssembler holds half-assembled; the oldest is dropped beyond. */
export const MAX_PENDING_SPLIT_IDS = 8;
/** Raw fragment bytes one split response may hold before it is refused (SPLIT_LIMIT). */
export const MAX_SPLIT_RESPONSE_BYTES = 1024 * 1024;
