/**
 * The API's error vocabulary: every error a client can see carries a literal `extensions.code`.
 * Anything else thrown inside a resolver is an internal error: masked to the client and logged
 * with the request id (see `formatApiError` and the error-logging plugin in plugins.ts).
 */
import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { unwrapResolverError } from "@apollo/server/errors";

export type ApiErrorCode =
  | "BAD_USER_INPUT"
  | "UNAUTHENTICATED"
  | "NOT_FOUND"
  | "QUERY_TOO_COMPLEX"
  | "RATE_LIMITED"
  | "BAD_REQUEST"
  | "PAYLOAD_TOO_LARGE"
  | "INTERNAL_SERVER_ERROR";

/**
 * A bad argument: `argumentName` is the argument's path as the client wrote it (`filter.cidr`, `after`,
 * `$f.tagsAll[1]`). Found before execution (no resolver ran), it answers HTTP 400 like graphql-js's own
 * variable errors.
 */
export class BadUserInputError extends GraphQLError {
  constructor(argumentName: string, message: string, options: { beforeExecution?: boolean } = {}) {
    super(`${argumentName}: ${message}`, {
      extensions: {
        code: "BAD_USER_INPUT" satisfies ApiErrorCode,
        argumentName,
        ...(options.beforeExecution ? { http: { status: 400 } } : {}),
      },
    });
  }
}

export class UnauthenticatedError extends GraphQLError {
  constructor(message = "a valid API key is required (Authorization: Bearer <key>)") {
    super(message, {
      extensions: { code: "UNAUTHENTICATED" satisfies ApiErrorCode, http: { status: 401 } },
    });
  }
}

export class NotFoundError extends GraphQLError {
  constructor(what: string) {
    super(`${what} not found`, { extensions: { code: "NOT_FOUND" satisfies ApiErrorCode } });
  }
}

/** Over one of the query limits; `limits` names the measure and its limit (`depth`/`maxDepth`, `aliases`/`maxAliases`, ...). */
export class QueryTooComplexError extends GraphQLError {
  constructor(message: string, limits: Readonly<Record<string, number>>) {
    super(message, {
      extensions: {
        code: "QUERY_TOO_COMPLEX" satisfies ApiErrorCode,
        ...limits,
        http: { status: 400 },
      },
    });
  }
}

export class RateLimitedError extends GraphQLError {
  constructor(retryAfterSeconds: number, what = "rate limit exceeded") {
    super(`${what}: retry in ${retryAfterSeconds} s`, {
      extensions: {
        code: "RATE_LIMITED" satisfies ApiErrorCode,
        retryAfterSeconds,
        http: { status: 429, headers: new Map([["retry-after", String(retryAfterSeconds)]]) },
      },
    });
  }
}

/** Codes produced by graphql-js and Apollo themselves for client mistakes: safe to show as they are. */
const CLIENT_CODES = new Set<string>([
  "BAD_USER_INPUT",
  "UNAUTHENTICATED",
  "NOT_FOUND",
  "QUERY_TOO_COMPLEX",
  "RATE_LIMITED",
  "PAYLOAD_TOO_LARGE",
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_REQUEST",
  "OPERATION_RESOLUTION_FAILURE",
  "PERSISTED_QUERY_NOT_FOUND",
  "PERSISTED_QUERY_NOT_SUPPORTED",
]);

/**
 * graphql-js reports a variable of the wrong type ('Variable "$first" got invalid value "ten"') as
 * BAD_USER_INPUT without naming it in the extensions; name it as `$first`, like our own errors do.
 */
function withVariableName(formatted: GraphQLFormattedError): GraphQLFormattedError {
  if (
    formatted.extensions?.["code"] !== "BAD_USER_INPUT" ||
    formatted.extensions["argumentName"] !== undefined
  )
    return formatted;
  const name = /^Variable "\$(\w+)"/.exec(formatted.message)?.[1];
  return name
    ? { ...formatted, extensions: { ...formatted.extensions, argumentName: `$${name}` } }
    : formatted;
}

/** Apollo has already given every error a code (INTERNAL_SERVER_ERROR for anything thrown uncoded). */
export function isClientErrorCode(code: unknown): boolean {
  return typeof code === "string" && CLIENT_CODES.has(code);
}

/** Request ids of masked errors, filled by the logging plugin before formatError runs. */
export const maskedErrorRequestIds = new WeakMap<object, string>();

/**
 * Apollo `formatError`: client errors pass unchanged; the rest become INTERNAL_SERVER_ERROR with a
 * request id, and keep Apollo's `stacktrace` only when `exposeStacks` (API_ERROR_STACKS, never in production).
 */
export function createErrorFormatter(options: {
  exposeStacks: boolean;
}): (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError {
  return (formatted, error) => {
    if (isClientErrorCode(formatted.extensions?.["code"])) return withVariableName(formatted);
    const original = unwrapResolverError(error);
    const requestId =
      typeof original === "object" && original !== null
        ? maskedErrorRequestIds.get(original)
        : undefined;
    const stacktrace = options.exposeStacks ? formatted.extensions?.["stacktrace"] : undefined;
    return {
      message: requestId
        ? `internal server error (request id ${requestId})`
        : "internal server error",
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: {
        code: "INTERNAL_SERVER_ERROR" satisfies ApiErrorCode,
        ...(requestId ? { requestId } : {}),
        ...(stacktrace ? { stacktrace } : {}),
      },
    };
  };
}

export const formatApiError = createErrorFormatter({ exposeStacks: false });
