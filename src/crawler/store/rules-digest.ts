/**
 * A fingerprint of the rules and raw values an answer stores (game_server.rules_digest). Rules are what a
 * server answers at the greatest length (a plugin-heavy server publishes hundreds of cvars) and what changes
 * least between crawls: with the stored row's digest in hand, the crawl's write leaves them out when they are
 * the same, so neither the crawler cleans and serialises them nor PostgreSQL parses and compares them again
 * (issue 14 item 2). Only the crawl's answer write (server-store.ts applyStates) sets the digest; every other
 * write of rules or raw sets it to NULL, which no digest matches.
 *
 * SHA-1 (node:crypto) over the rules as a query batch holds them, packed into one string (held-rules.ts):
 * 3.5-3.8 us per answer of the bench fleet, against 12 us for two multiplicative lanes in JavaScript over the
 * same string (docs/BENCHMARKS-history.md, 2026-11-29). It is the digest of what is stored: names and values
 * cleaned as the write cleans them. Nothing here needs a cryptographic hash: a server that made its new rules
 * collide with its old ones would only keep the old ones stored, which it could as well have sent.
 */
import { hash } from "node:crypto";
import { PackedRules, rulesCount, type HeldStatus } from "./held-rules";

/**
 * Part of every digest: changed whenever what is stored for the same answer changes (its cleaning, its
 * layout) or the digest itself does, so no digest written by older code matches and each row's rules are
 * written once more.
 */
const DIGEST_VERSION = "rules-digest/2";

/** A digest as game_server.rules_digest holds it (bigint, as text: JavaScript numbers lose its low bits). */
export type RulesDigest = string;

/**
 * What is hashed: the version, the number of rules and whether raw values follow, then every name and value
 * each ended by a NUL. No cleaned string holds a NUL and the count says where the rules end, so two answers
 * that store differently are never the same text.
 */
function digestOf(status: Pick<HeldStatus, "rules" | "raw">): RulesDigest {
  const rules = status.rules instanceof PackedRules ? status.rules : PackedRules.of(status.rules);
  // Raw values (older protocols, rare) in the same packed form as the rules: each name and value cleaned, NUL-ended.
  const raw =
    status.raw === null
      ? null
      : PackedRules.of(Object.entries(status.raw).map(([name, value]) => ({ name, value })));
  const text = `${DIGEST_VERSION}\0${rules.count}\0${raw === null ? "-" : "+"}\0${rules.text}${raw?.text ?? ""}`;
  return BigInt.asIntN(64, BigInt(`0x${hash("sha1", text, "hex").slice(0, 16)}`)).toString();
}

/** Most servers answer no rules at all (or none are asked for): one digest for all of them. */
const NO_RULES_DIGEST = digestOf({ rules: [], raw: null });

export function rulesDigestOf(status: Pick<HeldStatus, "rules" | "raw">): RulesDigest {
  if (rulesCount(status.rules) === 0 && status.raw === null) return NO_RULES_DIGEST;
  return digestOf(status);
}
