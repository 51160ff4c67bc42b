/**
 * Every failure the protocol library reports is a ProtocolError with a stable `code`.
 * Callers branch on `code`, never on the message. `offset` is the byte offset in the
 * packet (or reassembled payload) where decoding stopped, when there is one.
 */
export type ProtocolErrorCode =
  | "TIMEOUT"
  | "TRUNCATED"
  | "MALFORMED"
  | "UNEXPECTED_RESPONSE"
  | "CHALLENGE_LOOP"
  | "CHECKSUM"
  | "DECOMPRESSION"
  | "SPLIT_LIMIT"
  | "NOT_SUPPORTED"
  | "ADDRESS_REFUSED"
  | "INVALID_ARGUMENT"
  | "ABORTED"
  | "NETWORK"
  /** A master filter string longer than the master accepts (about 190 bytes). */
  | "FILTER_TOO_LONG"
  /** A list source kept refusing us (HTTP 429, or silence after its packet budget) past every retry. */
  | "RATE_LIMITED";

/**
 * The one code that is our caller's mistake, not an outcome of what a remote sent or did not send: its
 * error carries a stack trace, which points at the call to fix.
 */
const TRACED_CODES: ReadonlySet<ProtocolErrorCode> = new Set(["INVALID_ARGUMENT"]);

export class ProtocolError extends Error {
  readonly code: ProtocolErrorCode;
  readonly offset: number | undefined;

  constructor(
    code: ProtocolErrorCode,
    message: string,
    options: { offset?: number; cause?: unknown } = {},
  ) {
    // A timeout, a truncated or malformed reply: where it was raised (a timer, a decoder) says nothing its
    // code, message and offset do not, and capturing the stack cost 5-7 us, more than decoding an answer
    // (a crawl raises one per silent server; docs/BENCHMARKS-history.md, "The crawl's profile and PostgreSQL's
    // statements"). A cause keeps its own stack.
    const stackTraceLimit = Error.stackTraceLimit;
    if (!TRACED_CODES.has(code)) Error.stackTraceLimit = 0;
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    Error.stackTraceLimit = stackTraceLimit;
    this.name = "ProtocolError";
    this.code = code;
    this.offset = options.offset;
  }

  toJSON(): { code: ProtocolErrorCode; message: string; offset?: number } {
    return this.offset === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, offset: this.offset };
  }
}

export function isProtocolError(err: unknown, code?: ProtocolErrorCode): err is ProtocolError {
  return err instanceof ProtocolError && (code === undefined || err.code === code);
}
