/**
 * API keys for mutations: `Authorization: Bearer <key>`, keys from GSINDEX_API_KEYS. Reads are public.
 * Keys are compared as SHA-256 digests with timingSafeEqual, so neither the key length nor a prefix leaks
 * through response timing.
 */
import "reflect-metadata";
import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareFn } from "type-graphql";
import { UnauthenticatedError } from "./errors";

export type ApiKeyStatus = "missing" | "invalid" | "valid";

const digest = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest();

export function createApiKeyChecker(
  keys: readonly string[],
): (authorization: string | undefined) => ApiKeyStatus {
  const digests = keys.filter((k) => k.length > 0).map(digest);
  return (authorization) => {
    if (authorization === undefined || authorization.trim() === "") return "missing";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1]) return "invalid";
    const given = digest(match[1]);
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(d, given) || ok; // no early exit
    return ok ? "valid" : "invalid";
  };
}

/** `Basic base64(user:key)` becomes `Bearer key` (the dashboard's browser login); anything else is passed on as it is. */
export function asBearer(authorization: string | undefined): string | undefined {
  const basic =
    authorization === undefined ? null : /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (!basic?.[1]) return authorization;
  const decoded = Buffer.from(basic[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? undefined : `Bearer ${decoded.slice(colon + 1)}`;
}

/** Resolver middleware for every mutation: nothing runs without a valid key. */
export const RequireApiKey: MiddlewareFn<{ apiKeyStatus: ApiKeyStatus }> = async (
  { context },
  next,
) => {
  if (context.apiKeyStatus !== "valid") {
    throw new UnauthenticatedError(
      context.apiKeyStatus === "missing"
        ? "this mutation needs an API key (Authorization: Bearer <key>)"
        : "the API key is not valid",
    );
  }
  return next();
};
