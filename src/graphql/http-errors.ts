/**
 * Errors answered by express, in front of Apollo or after it failed: the same GraphQL shape as Apollo's
 * (`{ errors: [{ message, extensions: { code } }] }`, JSON), never express's HTML page, never a stack or
 * a path unless API_ERROR_STACKS asks for one outside production. A body-parser error (bad JSON, a JSON
 * `null`, too large, an unknown charset) is the client's: BAD_REQUEST or PAYLOAD_TOO_LARGE; anything else
 * is ours: logged with the request id and masked.
 */
import type express from "express";
import type { GraphQLError } from "graphql";
import type { Logger } from "../shared/logger";
import type { ApiErrorCode } from "./errors";

/** Answers one GraphQL error; `extensions.http` (Apollo's convention) gives the status and headers. */
export function sendGraphqlError(res: express.Response, error: GraphQLError): void {
  const { http, ...extensions } = error.extensions as {
    http?: { status?: number; headers?: Map<string, string> };
  } & Record<string, unknown>;
  for (const [name, value] of http?.headers ?? []) res.setHeader(name, value);
  res.status(http?.status ?? 400).json({ errors: [{ message: error.message, extensions }] });
}

function sendError(
  res: express.Response,
  status: number,
  code: ApiErrorCode,
  message: string,
  extensions: Record<string, unknown> = {},
): void {
  res.status(status).json({ errors: [{ message, extensions: { code, ...extensions } }] });
}

interface HttpError {
  status?: unknown;
  statusCode?: unknown;
  type?: unknown;
  stack?: unknown;
}

/** Our words for body-parser's error types: its own messages may quote the body back. */
const CLIENT_MESSAGES: Readonly<Record<string, string>> = {
  "entity.parse.failed":
    'the request body is not valid JSON: send a JSON object such as {"query": "{ sources { name } }"}',
  "entity.verify.failed": "the request body was refused",
  "charset.unsupported": "unsupported charset: send the body as UTF-8",
  "encoding.unsupported":
    "unsupported Content-Encoding: send the body uncompressed, gzip or deflate",
  "request.aborted": "the request was aborted before its body was read",
  "request.size.invalid": "the request body is not as long as its Content-Length",
  "stream.encoding.set": "the request body could not be read",
};

export interface ErrorHandlerOptions {
  logger: Logger;
  maxBodyBytes: number;
  exposeStacks: boolean;
  requestIdOf: (res: express.Response) => string;
}

/** The last middleware of the app: every error becomes a GraphQL-shaped JSON answer. */
export function graphqlErrorHandler(options: ErrorHandlerOptions): express.ErrorRequestHandler {
  return (err: unknown, _req, res, next) => {
    if (res.headersSent) {
      next(err); // express closes the connection; nothing more can be said to the client
      return;
    }
    const e = (typeof err === "object" && err !== null ? err : {}) as HttpError;
    const rawStatus =
      typeof e.status === "number"
        ? e.status
        : typeof e.statusCode === "number"
          ? e.statusCode
          : 500;
    const status = rawStatus >= 400 && rawStatus < 600 ? rawStatus : 500;
    const type = typeof e.type === "string" ? e.type : "";
    if (status === 413) {
      sendError(
        res,
        413,
        "PAYLOAD_TOO_LARGE",
        `the request body is larger than ${options.maxBodyBytes} bytes`,
        { maxBodyBytes: options.maxBodyBytes },
      );
      return;
    }
    if (status < 500) {
      sendError(res, status, "BAD_REQUEST", CLIENT_MESSAGES[type] ?? "bad request");
      return;
    }
    const requestId = options.requestIdOf(res);
    options.logger.error({ err, requestId }, "internal error in an HTTP request");
    const stacktrace =
      options.exposeStacks && typeof e.stack === "string" ? e.stack.split("\n") : undefined;
    sendError(
      res,
      500,
      "INTERNAL_SERVER_ERROR",
      `internal server error (request id ${requestId})`,
      { requestId, ...(stacktrace ? { stacktrace } : {}) },
    );
  };
}
