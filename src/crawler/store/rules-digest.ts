/**
 * A fingerprint of the rules and raw values an answer stores (game_server.rules_digest). Rules are what a
 * server answers at the greatest length (a plugin-heavy server publishes hundreds of cvars) and what changes
 * least between crawls: with the stored row's digest in hand, the crawl's write leaves them out when they are
 * the same, so neither the crawler cleans and serialises them nor PostgreSQL parses and compares them again
 * (issue 14 item 2). Only the crawl's answer write (server-store.ts applyStates) sets the digest; every other
 * write of rules or raw sets it to NULL, which no digest matches.
 *
 * MD5 because it is fast and native: a server that found a collision with its own earlier rules would only
 * keep those stored, which it could as well have sent.
 */
import { createHash } from "node:crypto";
import type { ServerStatus } from "../../protocol";

/**
 * Part of every digest: bumped whenever what is stored for the same answer changes (its cleaning, its
 * layout), so no digest written by older code matches and each row's rules are written once more.
 */
const DIGEST_VERSION = "rules-digest/1";

/** A digest as game_server.rules_digest holds it (bigint, as text: JavaScript numbers lose its low bits). */
export type RulesDigest = string;

function digestOf(rulesJson: string, rawJson: string): RulesDigest {
  return createHash("md5")
    .update(DIGEST_VERSION)
    .update(rulesJson)
    .update("\u0000")
    .update(rawJson)
    .digest()
    .readBigInt64BE(0)
    .toString();
}

/** Most servers answer no rules at all (or none are asked for): one digest for all of them. */
const NO_RULES_DIGEST = digestOf("[]", "null");

export function rulesDigestOf(status: Pick<ServerStatus, "rules" | "raw">): RulesDigest {
  if (status.rules.length === 0 && status.raw === null) return NO_RULES_DIGEST;
  return digestOf(JSON.stringify(status.rules), JSON.stringify(status.raw));
}
