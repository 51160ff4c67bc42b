/** Where a packet is sent. `port` here means exactly that: the port the query goes to. */
export interface ServerAddress {
  host: string;
  port: number;
}

/** Options every query function takes. Defaults live in defaults.ts. */
export interface QueryOptions {
  /** Deadline for the whole query, retries and challenge rounds included. */
  timeoutMs?: number;
  /** How many times a request is re-sent when nothing answers before its per-attempt deadline. */
  retries?: number;
  /** Cancels the query; it then fails with code ABORTED. */
  signal?: AbortSignal;
}
