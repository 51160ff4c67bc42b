/**
 * Express middleware in front of Apollo, so that a hostile client costs little: a client over its read
 * rate limit is refused before its body is read or its query parsed; a query over the document limits
 * is refused before graphql-js validates it; a client that keeps sending wrong API keys is refused
 * on every route that takes one (mutations, the queue dashboard) until its window ends.
 */
import { randomUUID } from "node:crypto";
import type express from "express";
import { GraphQLError } from "graphql";
import { asBearer, type ApiKeyStatus } from "./auth";
import { RateLimitedError } from "./errors";
import { sendGraphqlError } from "./http-errors";
import { assertDocumentLimits, type DocumentLimits } from "./limits";
import { rateLimitHeaders } from "./plugins";
import { secondsUntilReset, type RateLimiter } from "./rate-limit";

/**
 * The client identity for the rate limits: the peer address, or with API_TRUST_PROXY_HOPS the address
 * that many trusted proxies forwarded (express's req.ip); never a header an untrusted peer can forge.
 */
export function clientKeyOf(req: express.Request): string {
  return req.ip ?? req.socket.remoteAddress ?? "unknown";
}

/** Every answer carries an `x-request-id`; the logs show it with whatever went wrong. */
export function assignRequestId(
  _req: express.Request,
  res: express.Response,
  next: express.NextFunction,
): void {
  const requestId = randomUUID();
  res.locals["requestId"] = requestId;
  res.setHeader("x-request-id", requestId);
  next();
}

export function requestIdOf(res: express.Response): string {
  const id: unknown = res.locals["requestId"];
  return typeof id === "string" ? id : randomUUID();
}

/** Units of the read rate limit paid by `readRateLimitGuard` for this request. */
export function readUnitsPaidOf(res: express.Response): number {
  const paid: unknown = res.locals["readUnitsPaid"];
  return typeof paid === "number" ? paid : 0;
}

/**
 * Every /graphql request without a valid key pays one unit of the read rate limit before anything is
 * read; once the client is over the limit, it is refused here, so a limited client's requests cost a
 * counter lookup whatever their size. The rest of a read's cost is charged once its complexity is known
 * (limitsPlugin). A valid key skips this (mutations are not counted; its reads pay in full later).
 */
export function readRateLimitGuard(
  limiter: RateLimiter,
  checkApiKey: (authorization: string | undefined) => ApiKeyStatus,
): express.RequestHandler {
  return (req, res, next) => {
    if (limiter.limit <= 0 || checkApiKey(req.headers.authorization) === "valid") {
      next();
      return;
    }
    limiter.hit(clientKeyOf(req), 1).then((decision) => {
      for (const [name, value] of rateLimitHeaders(limiter.limit, decision))
        res.setHeader(name, value);
      if (!decision.allowed) {
        sendGraphqlError(res, new RateLimitedError(secondsUntilReset(decision)));
        return;
      }
      res.locals["readUnitsPaid"] = 1;
      next();
    }, next);
  };
}

/**
 * Failed authentication per client: a request whose Authorization (Bearer, or Basic with the key as
 * password) holds no valid key counts one failure as it arrives, so guesses sent in parallel are counted
 * too. Past the limit every request that carries a key is refused with 429 until the window ends, the
 * right key included: otherwise the answer would tell a guesser when it had found it. A request without
 * credentials is not a failure (a browser asking the dashboard first sends none).
 */
export function authFailureGuard(
  limiter: RateLimiter,
  checkApiKey: (authorization: string | undefined) => ApiKeyStatus,
): express.RequestHandler {
  return (req, res, next) => {
    const authorization = req.headers.authorization;
    if (limiter.limit <= 0 || authorization === undefined || authorization.trim() === "") {
      next();
      return;
    }
    const valid = checkApiKey(asBearer(authorization)) === "valid";
    limiter.hit(clientKeyOf(req), valid ? 0 : 1).then((decision) => {
      const lockedOut = valid ? decision.count >= limiter.limit : !decision.allowed;
      if (lockedOut) {
        sendGraphqlError(
          res,
          new RateLimitedError(
            secondsUntilReset(decision),
            "too many failed authentications from this client",
          ),
        );
        return;
      }
      next();
    }, next);
  };
}

/** Token, field and alias caps on the query text (POST body or GET ?query=), before Apollo parses and validates it. */
export function documentLimitsGuard(limits: DocumentLimits): express.RequestHandler {
  return (req, res, next) => {
    const query: unknown =
      req.method === "GET"
        ? req.query["query"]
        : (req.body as { query?: unknown } | undefined)?.query;
    if (typeof query === "string") {
      try {
        assertDocumentLimits(query, limits);
      } catch (err) {
        if (!(err instanceof GraphQLError)) throw err;
        sendGraphqlError(res, err);
        return;
      }
    }
    next();
  };
}
