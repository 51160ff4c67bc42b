/**
 * An answer's rules as a query batch holds them until its write (crawl-jobs.ts queryBatch, answer-row.ts):
 * packed into one string. A batch keeps every answer until its slowest server is done and the write has run,
 * so thousands of answers are alive at once; decoded, each rule is an object and two slices of the reply's
 * whole text.
 * In a heap snapshot 6 s into a 10,000-server discovery, 25 batches held 4,951 answers, and their rules were
 * about a third of the 84.5 MiB alive (issue 14 item 3, docs/BENCHMARKS-history.md). Each of those objects
 * also outlives a young-generation collection and is copied out of it. Packed, an answer's rules are one
 * flat string.
 *
 * Names and values are cleaned (sanitize.ts cleanText) as they are packed: no NUL is left in them, so a NUL
 * ends each one, and the write stores them as they are.
 */
import type { ServerStatus, StatusRule } from "../../protocol";
import { cleanText } from "./sanitize";

export class PackedRules {
  private constructor(
    /** Each name and each value, in wire order, followed by a NUL. */
    readonly text: string,
    readonly count: number,
  ) {}

  static of(rules: readonly StatusRule[]): PackedRules {
    const parts = new Array<string>(rules.length * 2 + 1);
    let i = 0;
    for (const rule of rules) {
      parts[i++] = cleanText(rule.name);
      parts[i++] = cleanText(rule.value);
    }
    parts[i] = "";
    return new PackedRules(parts.join("\0"), rules.length);
  }

  /** The rules again, as the write stores them. */
  list(): StatusRule[] {
    const parts = this.text.split("\0");
    const rules = new Array<StatusRule>(this.count);
    for (let i = 0; i < this.count; i++)
      rules[i] = { name: parts[2 * i] as string, value: parts[2 * i + 1] as string };
    return rules;
  }
}

/** Rules as the write takes them: as decoded, or packed while their batch held them. */
export type HeldRules = readonly StatusRule[] | PackedRules;

/** An answer as the write takes it. A ServerStatus is one. */
export type HeldStatus = Omit<ServerStatus, "rules"> & { rules: HeldRules };

export function rulesCount(rules: HeldRules): number {
  return rules instanceof PackedRules ? rules.count : rules.length;
}
