/**
 * How the simulated list sources (UDP master, Steam Web API) apply a master filter to a simulated server.
 * Semantics follow the Valve master server query protocol's list of filters (docs/list-sources.md); keys the master does not know match everything, as on the real
 * one. String comparisons are case-insensitive; name_match / version_match take '*' wildcards and must
 * match the whole value. collapse_addr_hash works on the whole list (see applyMasterFilter).
 */
import type { MasterFilterNode, MasterFilterPair } from "../protocol";
import type { SimServerSpec } from "./fleet-spec";

const globCache = new Map<string, RegExp>();

function glob(pattern: string): RegExp {
  let re = globCache.get(pattern);
  if (!re) {
    const body = pattern
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    re = new RegExp(`^${body}$`, "is");
    if (globCache.size > 10_000) globCache.clear();
    globCache.set(pattern, re);
  }
  return re;
}

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

function tagsOf(spec: SimServerSpec): Set<string> {
  return new Set(spec.state.keywords.map((k) => k.toLowerCase()));
}

function matchesPair(pair: MasterFilterPair, spec: SimServerSpec): boolean {
  const s = spec.state;
  const value = pair.value;
  switch (pair.key) {
    case "type":
      return same(s.serverType, value);
    case "dedicated":
      return s.serverType === "d";
    case "proxy":
      return s.serverType === "p";
    case "secure":
      return s.vacSecured;
    case "linux":
      return s.environment === "l";
    case "gamedir":
      return same(s.folder, value);
    case "map":
      return same(s.map, value);
    case "empty":
      return s.players > 0;
    case "full":
      return s.players < s.maxPlayers;
    case "noplayers":
      return s.players === 0;
    case "appid":
      return s.appId === Number(value);
    case "napp":
      return s.appId !== Number(value);
    case "password":
      return s.passwordProtected === (value !== "0");
    case "name_match":
      return glob(value).test(s.name);
    case "version_match":
      return glob(value).test(s.version);
    case "gametype":
    case "gamedata": {
      const tags = tagsOf(spec);
      return value.split(",").every((tag) => tag === "" || tags.has(tag.toLowerCase()));
    }
    case "gamedataor": {
      const tags = tagsOf(spec);
      return value.split(",").some((tag) => tags.has(tag.toLowerCase()));
    }
    case "gameaddr": {
      const colon = value.lastIndexOf(":");
      if (colon < 0) return spec.host === value;
      const port = Number(value.slice(colon + 1));
      return (
        spec.host === value.slice(0, colon) && (spec.queryPort === port || s.gamePort === port)
      );
    }
    default:
      // white, collapse_addr_hash and unknown keys: no per-server condition.
      return true;
  }
}

export function matchesMasterFilterNode(node: MasterFilterNode, spec: SimServerSpec): boolean {
  if (node.kind === "pair") return matchesPair(node, spec);
  switch (node.op) {
    case "and":
      return node.conditions.every((c) => matchesMasterFilterNode(c, spec));
    case "or":
      return node.conditions.some((c) => matchesMasterFilterNode(c, spec));
    case "nor":
      return !node.conditions.some((c) => matchesMasterFilterNode(c, spec));
    case "nand":
      return !node.conditions.every((c) => matchesMasterFilterNode(c, spec));
  }
}

/** The servers of `fleet` that pass every top-level condition, in fleet order. */
export function applyMasterFilter(
  fleet: readonly SimServerSpec[],
  nodes: readonly MasterFilterNode[],
): SimServerSpec[] {
  const matched = fleet.filter((spec) =>
    nodes.every((node) => matchesMasterFilterNode(node, spec)),
  );
  const collapse = nodes.some((node) => node.kind === "pair" && node.key === "collapse_addr_hash");
  if (!collapse) return matched;
  const seen = new Set<string>();
  return matched.filter((spec) => !seen.has(spec.host) && seen.add(spec.host) !== undefined);
}
