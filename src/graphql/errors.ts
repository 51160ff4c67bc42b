/**
 * The API's error vocabulary: every error a client can see carries a literal `extensions.code`.
 * Anything else thrown inside a resolver is an internal error: masked to the client and logged
 * with the request id (see `formatApiError` and the error-logging plugin in plugins.ts).
 */
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';

export type ApiErrorCode =
  | 'BAD_USER_INPUT'
  | 'UNAUTHENTICATED'
  | 'NOT_FOUND'
  | 'QUERY_TOO_COMPLEX'
  | 'RATE_LIMITED'
  | 'INTERNAL_SERVER_ERROR';

/** A bad argument: `argumentName` is the argument's path as the client wrote it (`filter.cidr`, `after`). */
export class BadUserInputError extends GraphQLError {
  constructor(argumentName: string, message: string) {
    super(`${argumentName}: ${message}`, { extensions: { code: 'BAD_USER_INPUT' satisfies ApiErrorCode, argumentName } });
  }
}

export class UnauthenticatedError extends GraphQLError {
  constructor(message = 'a valid API key is required (Authorization: Bearer <key>)') {
    super(message, { extensions: { code: 'UNAUTHENTICATED' satisfies ApiErrorCode, http: { status: 401 } } });
  }
}

export class NotFoundError extends GraphQLError {
  constructor(what: string) {
    super(`${what} not found`, { extensions: { code: 'NOT_FOUND' satisfies ApiErrorCode } });
  }
}

export class QueryTooComplexError extends GraphQLError {
  constructor(message: string, limits: { depth?: number; maxDepth?: number; complexity?: number; maxComplexity?: number }) {
    super(message, { extensions: { code: 'QUERY_TOO_COMPLEX' satisfies ApiErrorCode, ...limits, http: { status: 400 } } });
  }
}

export class RateLimitedError extends GraphQLError {
  constructor(retryAfterSeconds: number) {
    super(`rate limit exceeded: retry in ${retryAfterSeconds} s`, {
      extensions: {
        code: 'RATE_LIMITED' satisfies ApiErrorCode,
        retryAfterSeconds,
        http: { status: 429, headers: new Map([['retry-after', String(retryAfterSeconds)]]) },
      },
    });
  }
}

/** Codes produced by graphql-js and Apollo themselves for client mistakes: safe to show as they are. */
const CLIENT_CODES = new Set<string>([
  'BAD_USER_INPUT',
  'UNAUTHENTICATED',
  'NOT_FOUND',
  'QUERY_TOO_COMPLEX',
  'RATE_LIMITED',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/**
 * graphql-js reports a variable of the wrong type ('Variable "$first" got invalid value "ten"') as
 * BAD_USER_INPUT without naming it in the extensions; name it as `$first`, like our own errors do.
 */
function withVariableName(formatted: GraphQLFormattedError): GraphQLFormattedError {
  if (formatted.extensions?.['code'] !== 'BAD_USER_INPUT' || formatted.extensions['argumentName'] !== undefined) return formatted;
  const name = /^Variable "\$(\w+)"/.exec(formatted.message)?.[1];
  return name ? { ...formatted, extensions: { ...formatted.extensions, argumentName: `$${name}` } } : formatted;
}

/** Apollo has already given every error a code (INTERNAL_SERVER_ERROR for anything thrown uncoded). */
export function isClientErrorCode(code: unknown): boolean {
  return typeof code === 'string' && CLIENT_CODES.has(code);
}

/** Request ids of masked errors, filled by the logging plugin before formatError runs. */
export const maskedErrorRequestIds = new WeakMap<object, string>();

/** Apollo `formatError`: client errors pass unchanged; the rest become INTERNAL_SERVER_ERROR with a request id. */
export function formatApiError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  if (isClientErrorCode(formatted.extensions?.['code'])) return withVariableName(formatted);
  const original = unwrapResolverError(error);
  const requestId = typeof original === 'object' && original !== null ? maskedErrorRequestIds.get(original) : undefined;
  return {
    message: requestId ? `internal server error (request id ${requestId})` : 'internal server error',
    ...(formatted.locations ? { locations: formatted.locations } : {}),
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: { code: 'INTERNAL_SERVER_ERROR' satisfies ApiErrorCode, ...(requestId ? { requestId } : {}) },
  };
}
