/**
 * Crawls a remote management server (docs/list-sources.md) as a list source: connect, send msQueryGameServers, read the
 * msRQueryGameServers answer. Read leniently: the answer may come as one line or pretty-printed over many
 * (the protocol document's own examples are), other messages before it are skipped, numeric strings are numbers.
 */
import net from "node:net";
import {
  DEFAULT_MANAGEMENT_TIMEOUT_MS,
  MANAGEMENT_SERVER_PORT,
  MAX_MANAGEMENT_REPLY_BYTES,
} from "../defaults";
import { ProtocolError } from "../errors";
import { startDeadline } from "./deadline";
import {
  MS_QUERY_GAME_SERVERS,
  type QueryGameServersReply,
  readQueryGameServersReply,
} from "./management-messages";

export interface ManagementQueryOptions {
  host: string;
  /** @defaultValue 51963 */
  port?: number;
  /** Deadline for connecting, asking and reading the whole answer. @defaultValue 3000 */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** An answer larger than this is refused (MALFORMED). @defaultValue 8 MiB */
  maxReplyBytes?: number;
}

/**
 * Splits a byte stream into top-level JSON objects by brace depth outside strings, whatever the line breaks.
 * Bytes between objects are skipped.
 */
export class JsonObjectFramer {
  private buffer = "";
  private depth = 0;
  private inString = false;
  private escaped = false;
  private start = -1;
  private scanned = 0;

  push(text: string): string[] {
    this.buffer += text;
    const objects: string[] = [];
    for (let i = this.scanned; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === "\\") this.escaped = true;
        else if (c === '"') this.inString = false;
      } else if (c === '"') {
        if (this.depth > 0) this.inString = true;
      } else if (c === "{") {
        if (this.depth++ === 0) this.start = i;
      } else if (c === "}" && this.depth > 0 && --this.depth === 0) {
        objects.push(this.buffer.slice(this.start, i + 1));
        this.start = -1;
      }
    }
    if (this.depth === 0) {
      this.buffer = "";
      this.scanned = 0;
    } else {
      this.buffer = this.buffer.slice(this.start);
      this.scanned = this.buffer.length;
      this.start = 0;
    }
    return objects;
  }

  get bufferedLength(): number {
    return this.buffer.length;
  }
}

export function queryManagementServer(
  options: ManagementQueryOptions,
): Promise<QueryGameServersReply> {
  const port = options.port ?? MANAGEMENT_SERVER_PORT;
  const maxReplyBytes = options.maxReplyBytes ?? MAX_MANAGEMENT_REPLY_BYTES;
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: options.host, port });
    const framer = new JsonObjectFramer();
    const decoder = new TextDecoder("utf-8");
    let received = 0;
    let settled = false;
    const deadline = startDeadline(
      options.timeoutMs ?? DEFAULT_MANAGEMENT_TIMEOUT_MS,
      options.signal,
    );
    const signal = deadline.signal;
    const finish = (err: ProtocolError | null, reply?: QueryGameServersReply): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      deadline.dispose();
      socket.destroy();
      if (err) reject(err);
      else resolve(reply as QueryGameServersReply);
    };
    const onAbort = (): void => {
      finish(
        !deadline.timedOut
          ? new ProtocolError("ABORTED", "management query aborted")
          : new ProtocolError(
              "TIMEOUT",
              `management server ${options.host}:${port} did not answer within ${options.timeoutMs ?? DEFAULT_MANAGEMENT_TIMEOUT_MS} ms`,
            ),
      );
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    socket.on("connect", () =>
      socket.write(JSON.stringify({ command: MS_QUERY_GAME_SERVERS }) + "\n"),
    );
    socket.on("data", (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxReplyBytes) {
        finish(
          new ProtocolError("MALFORMED", `management answer exceeds ${maxReplyBytes} bytes`, {
            offset: maxReplyBytes,
          }),
        );
        return;
      }
      for (const text of framer.push(decoder.decode(chunk, { stream: true }))) {
        let message: unknown;
        try {
          message = JSON.parse(text);
        } catch {
          continue; // not JSON after all: keep reading until the deadline
        }
        const reply = readQueryGameServersReply(message);
        if (reply) {
          finish(null, reply);
          return;
        }
      }
    });
    socket.on("error", (err) =>
      finish(
        new ProtocolError("NETWORK", `management server ${options.host}:${port}: ${err.message}`, {
          cause: err,
        }),
      ),
    );
    socket.on("close", () =>
      finish(
        new ProtocolError(
          "TRUNCATED",
          `management server ${options.host}:${port} closed the connection before answering`,
          { offset: received },
        ),
      ),
    );
  });
}
