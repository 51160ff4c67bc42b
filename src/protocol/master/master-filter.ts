/**
 * Master filter strings: `\key\value` pairs concatenated (Valve's "Master Server Query Protocol" page;
 * docs/list-sources.md). The same grammar serves the UDP master and the Steam Web API's `filter` parameter.
 *
 * Grammar, as this library writes and reads it:
 *   filter    := condition*
 *   condition := '\' key '\' value            (value has no '\' and no NUL)
 *              | '\' op '\' N condition{N}     (op = nor | nand | and | or)
 * A combinator counts its N DIRECT conditions: a nested combinator is one condition, together with all of
 * its own conditions. (`\nor\2\nand\2\map\a\map\b\secure\1` = NOT(nand(map a, map b) OR secure)). The simulator
 * parses with the same rule, so a filter built here means the same thing there.
 *
 * Escaping: the grammar has no escape character. In wildcard fields (name_match, version_match) a '\' in
 * a value is written as '*', which still matches it; anywhere else a '\' cannot be expressed and is refused
 * with INVALID_ARGUMENT, as are NUL bytes, and commas inside a single tag.
 * Length: the master rejects filters longer than about 190 bytes: the builder refuses them with FILTER_TOO_LONG.
 */
import { MAX_MASTER_FILTER_BYTES } from "../defaults";
import { ProtocolError } from "../errors";

export type MasterFilterCombinator = "nor" | "nand" | "and" | "or";

/** One `\key\value` pair. `key` is any key the master knows (see MasterFilter for the typed ones). */
export interface MasterFilterPair {
  kind: "pair";
  key: string;
  value: string;
}

/** `\op\N` followed by its N conditions. */
export interface MasterFilterGroup {
  kind: "group";
  op: MasterFilterCombinator;
  conditions: MasterFilterNode[];
}

export type MasterFilterNode = MasterFilterPair | MasterFilterGroup;

const COMBINATORS: ReadonlySet<string> = new Set(["nor", "nand", "and", "or"]);
const WILDCARD_KEYS: ReadonlySet<string> = new Set(["name_match", "version_match"]);

function invalid(message: string): ProtocolError {
  return new ProtocolError("INVALID_ARGUMENT", message);
}

function checkValue(key: string, value: string): string {
  if (value.includes("\0")) throw invalid(`master filter \\${key}\\ value contains a NUL byte`);
  if (!value.includes("\\")) return value;
  if (WILDCARD_KEYS.has(key)) return value.replaceAll("\\", "*");
  throw invalid(
    `master filter \\${key}\\ value ${JSON.stringify(value)} contains '\\', which the filter grammar cannot express`,
  );
}

function pair(key: string, value: string | number): MasterFilterPair {
  if (key === "" || key.includes("\\") || key.includes("\0"))
    throw invalid(`invalid master filter key ${JSON.stringify(key)}`);
  return { kind: "pair", key, value: checkValue(key, String(value)) };
}

function tags(key: string, list: readonly string[]): MasterFilterPair {
  for (const tag of list) {
    if (tag === "" || tag.includes(","))
      throw invalid(`master filter \\${key}\\ tag ${JSON.stringify(tag)} is empty or contains ','`);
  }
  return pair(key, list.join(","));
}

function group(op: MasterFilterCombinator, conditions: MasterFilterNode[]): MasterFilterGroup {
  if (conditions.length === 0) throw invalid(`\\${op}\\ needs at least one condition`);
  return { kind: "group", op, conditions };
}

function appId(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff)
    throw invalid(`app id ${value} is not an unsigned 32-bit integer`);
  return value;
}

/**
 * Typed constructors for every filter the "Master Server Query Protocol" page lists. Flag filters take no argument: the
 * master treats the presence of the key as the condition (writing 0 instead of 1 does not turn it off), except
 * `password`, whose value is meaningful (\password\0 = no password).
 */
export const MasterFilter = {
  /** \type\d|l|p: dedicated, listen, or SourceTV proxy servers only. */
  type: (serverType: "d" | "l" | "p") => pair("type", serverType),
  dedicated: () => pair("dedicated", 1),
  /** VAC-secured servers only. */
  secure: () => pair("secure", 1),
  gamedir: (folder: string) => pair("gamedir", folder),
  map: (map: string) => pair("map", map),
  linux: () => pair("linux", 1),
  /** \empty\1 keeps servers that are NOT empty. */
  notEmpty: () => pair("empty", 1),
  /** \full\1 keeps servers that are NOT full. */
  notFull: () => pair("full", 1),
  /** \noplayers\1 keeps servers with no players. */
  noPlayers: () => pair("noplayers", 1),
  /** SourceTV relays only. */
  proxy: () => pair("proxy", 1),
  whitelisted: () => pair("white", 1),
  appId: (id: number) => pair("appid", appId(id)),
  notAppId: (id: number) => pair("napp", appId(id)),
  password: (passwordProtected: boolean) => pair("password", passwordProtected ? 1 : 0),
  /** Servers carrying ALL these tags (A2S keywords). */
  gametype: (list: readonly string[]) => tags("gametype", list),
  gamedata: (list: readonly string[]) => tags("gamedata", list),
  gamedataor: (list: readonly string[]) => tags("gamedataor", list),
  /** Server name, with * wildcards. */
  nameMatch: (pattern: string) => pair("name_match", pattern),
  versionMatch: (pattern: string) => pair("version_match", pattern),
  collapseAddrHash: () => pair("collapse_addr_hash", 1),
  /** Servers on this IP (and port, when given). */
  gameaddr: (ip: string, port?: number) =>
    pair("gameaddr", port === undefined ? ip : `${ip}:${port}`),
  nor: (...conditions: MasterFilterNode[]) => group("nor", conditions),
  nand: (...conditions: MasterFilterNode[]) => group("nand", conditions),
  and: (...conditions: MasterFilterNode[]) => group("and", conditions),
  or: (...conditions: MasterFilterNode[]) => group("or", conditions),
  /** Any other key, for filters the master learns later. */
  raw: (key: string, value: string) => pair(key, value),
} as const;

function writeNode(node: MasterFilterNode, out: string[]): void {
  if (node.kind === "pair") {
    out.push("\\", node.key, "\\", checkValue(node.key, node.value));
    return;
  }
  if (node.conditions.length === 0) throw invalid(`\\${node.op}\\ needs at least one condition`);
  out.push("\\", node.op, "\\", String(node.conditions.length));
  for (const child of node.conditions) writeNode(child, out);
}

/** The filter string without the length check (for measuring candidates). */
export function formatMasterFilter(nodes: readonly MasterFilterNode[]): string {
  const out: string[] = [];
  for (const node of nodes) writeNode(node, out);
  return out.join("");
}

export function masterFilterBytes(filter: string): number {
  return Buffer.byteLength(filter, "utf8");
}

/** Throws FILTER_TOO_LONG when `filter` is longer than the master accepts. */
export function assertMasterFilterLength(
  filter: string,
  maxBytes = MAX_MASTER_FILTER_BYTES,
): string {
  const length = masterFilterBytes(filter);
  if (length > maxBytes) {
    throw new ProtocolError(
      "FILTER_TOO_LONG",
      `master filter is ${length} bytes; the master accepts at most ${maxBytes}`,
    );
  }
  return filter;
}

/**
 * The filter string for these conditions (ANDed at the top level, as the master does).
 * @throws ProtocolError INVALID_ARGUMENT for values the grammar cannot carry, FILTER_TOO_LONG past `maxBytes`.
 */
export function buildMasterFilter(
  nodes: readonly MasterFilterNode[],
  options: { maxBytes?: number } = {},
): string {
  return assertMasterFilterLength(formatMasterFilter(nodes), options.maxBytes);
}

/**
 * Parses a filter string into conditions (the simulator evaluates them; callers may pass text filters).
 * @throws ProtocolError MALFORMED with the character offset where parsing stopped.
 */
export function parseMasterFilter(filter: string): MasterFilterNode[] {
  if (filter === "") return [];
  if (!filter.startsWith("\\"))
    throw new ProtocolError("MALFORMED", `master filter must start with '\\'`, { offset: 0 });
  const tokens = filter.slice(1).split("\\");
  // A trailing '\' (e.g. "\gamedir\cstrike\") leaves an empty last token: tolerated, as the master does.
  if (tokens.length % 2 === 1 && tokens[tokens.length - 1] === "") tokens.pop();
  if (tokens.length % 2 === 1)
    throw new ProtocolError(
      "MALFORMED",
      `master filter key ${JSON.stringify(tokens[tokens.length - 1])} has no value`,
      { offset: filter.length },
    );
  const pairs: Array<{ key: string; value: string; offset: number }> = [];
  let offset = 0;
  for (let i = 0; i < tokens.length; i += 2) {
    const key = tokens[i] ?? "";
    const value = tokens[i + 1] ?? "";
    pairs.push({ key, value, offset });
    offset += key.length + value.length + 2;
  }
  let index = 0;
  const readNode = (): MasterFilterNode => {
    const current = pairs[index++];
    if (current === undefined)
      throw new ProtocolError("MALFORMED", "master filter ends inside a combinator", {
        offset: filter.length,
      });
    const key = current.key.toLowerCase();
    if (!COMBINATORS.has(key)) return { kind: "pair", key, value: current.value };
    if (!/^\d{1,3}$/.test(current.value) || Number(current.value) === 0) {
      throw new ProtocolError(
        "MALFORMED",
        `\\${key}\\ needs a positive condition count, got ${JSON.stringify(current.value)}`,
        { offset: current.offset },
      );
    }
    const conditions: MasterFilterNode[] = [];
    for (let n = Number(current.value); n > 0; n--) conditions.push(readNode());
    return { kind: "group", op: key as MasterFilterCombinator, conditions };
  };
  const nodes: MasterFilterNode[] = [];
  while (index < pairs.length) nodes.push(readNode());
  return nodes;
}
