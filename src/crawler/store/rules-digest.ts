/**
 * A fingerprint of the rules and raw values an answer stores (game_server.rules_digest). Rules are what a
 * server answers at the greatest length (a plugin-heavy server publishes hundreds of cvars) and what changes
 * least between crawls: with the stored row's digest in hand, the crawl's write leaves them out when they are
 * the same, so neither the crawler cleans and serialises them nor PostgreSQL parses and compares them again
 * (issue 14 item 2). Only the crawl's answer write (server-store.ts applyStates) sets the digest; every other
 * write of rules or raw sets it to NULL, which no digest matches.
 *
 * Two 32-bit multiplicative lanes over every name and value, in JavaScript: serialising the rules to hash them
 * with node:crypto cost three times as much (0.018 ms per server crawled in the bench fleet, about what leaving
 * them out saved). It is no cryptographic hash: a server that made its new rules collide with its old ones would
 * only keep the old ones stored, which it could as well have sent.
 */
import { PackedRules, rulesCount, type HeldStatus } from "./held-rules";

/**
 * Part of every digest: changed whenever what is stored for the same answer changes (its cleaning, its
 * layout), so no digest written by older code matches and each row's rules are written once more.
 */
const DIGEST_VERSION = "rules-digest/1";

/** A digest as game_server.rules_digest holds it (bigint, as text: JavaScript numbers lose its low bits). */
export type RulesDigest = string;

/** Marks between strings: above every UTF-16 code unit, so no text can imitate one. */
const END_OF_NAME = 0x1_0000;
const END_OF_VALUE = 0x1_0001;
const NO_RAW = 0x1_0002;
const RAW = 0x1_0003;

class Lanes {
  private a = 0x811c9dc5 | 0;
  private b = 0x9e3779b9 | 0;

  unit(code: number): void {
    this.a = Math.imul(this.a ^ code, 0x01000193);
    this.b = Math.imul(this.b ^ code, 0x9e3779b1);
  }

  text(value: string, end: number): void {
    for (let i = 0; i < value.length; i++) this.unit(value.charCodeAt(i));
    this.unit(end);
  }

  /** The same steps as text() over each name and value in turn: each NUL of a packed list ends one. */
  packed(rules: PackedRules): void {
    const text = rules.text;
    let end = END_OF_NAME;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code !== 0) this.unit(code);
      else {
        this.unit(end);
        end = end === END_OF_NAME ? END_OF_VALUE : END_OF_NAME;
      }
    }
  }

  digest(): RulesDigest {
    return BigInt.asIntN(64, (BigInt(this.a) << 32n) | BigInt(this.b >>> 0)).toString();
  }
}

function digestOf(status: Pick<HeldStatus, "rules" | "raw">): RulesDigest {
  const lanes = new Lanes();
  lanes.text(DIGEST_VERSION, END_OF_VALUE);
  if (status.rules instanceof PackedRules) lanes.packed(status.rules);
  else
    for (const rule of status.rules) {
      lanes.text(rule.name, END_OF_NAME);
      lanes.text(rule.value, END_OF_VALUE);
    }
  if (status.raw === null) lanes.unit(NO_RAW);
  else {
    lanes.unit(RAW);
    for (const name in status.raw) {
      lanes.text(name, END_OF_NAME);
      lanes.text(status.raw[name] ?? "", END_OF_VALUE);
    }
  }
  return lanes.digest();
}

/** Most servers answer no rules at all (or none are asked for): one digest for all of them. */
const NO_RULES_DIGEST = digestOf({ rules: [], raw: null });

export function rulesDigestOf(status: Pick<HeldStatus, "rules" | "raw">): RulesDigest {
  if (rulesCount(status.rules) === 0 && status.raw === null) return NO_RULES_DIGEST;
  return digestOf(status);
}
