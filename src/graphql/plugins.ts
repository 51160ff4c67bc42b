/**
 * Apollo plugins: the query limits and the read rate limit's charge (both need the resolved operation
 * and its variables), and logging of internal errors with the request id before formatError masks them.
 */
import type { ApolloServerPlugin } from "@apollo/server";
import { unwrapResolverError } from "@apollo/server/errors";
import { GraphQLError, Kind, type FragmentDefinitionNode } from "graphql";
import type { ApiContext } from "./context";
import { isClientErrorCode, maskedErrorRequestIds, RateLimitedError } from "./errors";
import { assertValidText } from "./input-text";
import { assertComplexity, assertDepth, type QueryLimits } from "./limits";
import { secondsUntilReset, type RateDecision, type RateLimiter } from "./rate-limit";

/** X-RateLimit-Limit / -Remaining / -Reset (seconds until the window ends), as most public APIs send them. */
export function rateLimitHeaders(limit: number, decision: RateDecision): Array<[string, string]> {
  return [
    ["x-ratelimit-limit", String(limit)],
    ["x-ratelimit-remaining", String(decision.remaining)],
    ["x-ratelimit-reset", String(secondsUntilReset(decision))],
  ];
}

/** How many units of the read rate limit a read of this complexity costs: one per `complexityPerRead`, at least one. */
export function readCost(complexity: number, complexityPerRead: number): number {
  return Math.max(1, Math.ceil(complexity / complexityPerRead));
}

export function limitsPlugin(
  limits: QueryLimits & { complexityPerRead: number },
  rateLimiter: RateLimiter,
): ApolloServerPlugin<ApiContext> {
  return {
    requestDidStart() {
      return Promise.resolve({
        async didResolveOperation(rc) {
          const operation = rc.operation;
          if (!operation) return; // Apollo reports a missing operation itself
          const fragments = new Map<string, FragmentDefinitionNode>();
          for (const def of rc.document.definitions) {
            if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
          }
          assertDepth(operation, fragments, limits.maxDepth);
          const complexity = assertComplexity(
            rc.schema,
            operation,
            fragments,
            rc.request.variables ?? {},
            limits,
          );
          assertValidText(rc.document, rc.request.variables);
          // Reads are public and pay for what they cost (the unit paid in front of Apollo included);
          // mutations need a key and are not counted.
          if (operation.operation !== "query" || rateLimiter.limit <= 0) return;
          const due =
            readCost(complexity, limits.complexityPerRead) - rc.contextValue.readUnitsPaid;
          if (due <= 0) return;
          const decision = await rateLimiter.hit(rc.contextValue.clientKey, due);
          for (const [name, value] of rateLimitHeaders(rateLimiter.limit, decision))
            rc.response.http.headers.set(name, value);
          if (!decision.allowed) throw new RateLimitedError(secondsUntilReset(decision));
        },
      });
    },
  };
}

function codeOf(error: GraphQLError): unknown {
  const original = unwrapResolverError(error);
  if (original instanceof GraphQLError && original.extensions["code"] !== undefined)
    return original.extensions["code"];
  return error.extensions["code"];
}

export function errorLoggingPlugin(): ApolloServerPlugin<ApiContext> {
  return {
    requestDidStart() {
      return Promise.resolve({
        didEncounterErrors(rc) {
          for (const error of rc.errors) {
            const code = codeOf(error);
            // graphql-js reports client mistakes (unknown field, bad variable) as uncoded errors without a
            // path; errors with a path come from resolvers, where an uncoded error is our bug.
            if (isClientErrorCode(code) || (code === undefined && error.path === undefined))
              continue;
            const original = unwrapResolverError(error);
            if (typeof original === "object" && original !== null)
              maskedErrorRequestIds.set(original, rc.contextValue.requestId);
            rc.contextValue.logger.error(
              { err: original, path: error.path, operationName: rc.operationName },
              "internal error in a GraphQL request",
            );
          }
          return Promise.resolve();
        },
      });
    },
  };
}

/** `cache-control: no-store` on every GraphQL response: answers are live data, never to be cached. */
export function noStorePlugin(): ApolloServerPlugin<ApiContext> {
  return {
    requestDidStart() {
      return Promise.resolve({
        willSendResponse(rc) {
          rc.response.http.headers.set("cache-control", "no-store");
          return Promise.resolve();
        },
      });
    },
  };
}

/** Anything with prom-client's Histogram `observe` (src/shared/metrics.ts `apiLatency`). */
export interface LatencyHistogram {
  observe(labels: { operation: string }, seconds: number): void;
}

/**
 * Request latency per operation, labelled `<query|mutation>:<first root field>` (bounded by the schema,
 * unlike client-chosen operation names), or `invalid` for requests that never reached execution.
 */
export function latencyPlugin(histogram: LatencyHistogram): ApolloServerPlugin<ApiContext> {
  return {
    requestDidStart() {
      const started = process.hrtime.bigint();
      return Promise.resolve({
        willSendResponse(rc) {
          const op = rc.operation;
          const first = op?.selectionSet.selections.find((sel) => sel.kind === Kind.FIELD);
          const label =
            op && first?.kind === Kind.FIELD ? `${op.operation}:${first.name.value}` : "invalid";
          histogram.observe({ operation: label }, Number(process.hrtime.bigint() - started) / 1e9);
          return Promise.resolve();
        },
      });
    },
  };
}
