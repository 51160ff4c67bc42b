import { Metrics } from "../../src/shared/metrics";
import type { LatencyHistogram } from "../../src/graphql/plugins";
import { parse, Kind, type FragmentDefinitionNode, type OperationDefinitionNode } from "graphql";
import { buildApiSchema } from "../../src/graphql/schema";
import { assertDepth, operationComplexity, operationDepth } from "../../src/graphql/limits";
import IORedis from "ioredis";
import { createMemoryRateLimiter, createRedisRateLimiter } from "../../src/graphql/rate-limit";
import { freePort } from "../../src/shared/free-port";
import { mapPattern, parseAddressOrCidr } from "../../src/graphql/game-server/server-filter";

const limits = { maxDepth: 10, maxComplexity: 50_000, defaultListSize: 10 };

function split(source: string): {
  op: OperationDefinitionNode;
  fragments: Map<string, FragmentDefinitionNode>;
} {
  const doc = parse(source);
  const fragments = new Map<string, FragmentDefinitionNode>();
  let op: OperationDefinitionNode | undefined;
  for (const d of doc.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    if (d.kind === Kind.OPERATION_DEFINITION) op = d;
  }
  return { op: op as OperationDefinitionNode, fragments };
}

describe("query limits", () => {
  it("depth follows fragments and skips introspection", () => {
    const { op, fragments } = split(
      "query { servers { ...F } __schema { types { fields { type { ofType { name } } } } } } fragment F on ServerConnection { nodes { source { crawls { id } } } }",
    );
    expect(operationDepth(op, fragments)).toBe(5);
    expect(() => assertDepth(op, fragments, 4)).toThrow(/depth 5 exceeds the limit of 4/);
  });

  it("complexity multiplies by page sizes, variables included, and not again for edges/nodes", async () => {
    const schema = await buildApiSchema();
    const { op, fragments } = split(
      "query($n: Int) { servers(first: $n) { edges { node { id name } } } }",
    );
    const at10 = operationComplexity(schema, op, fragments, { n: 10 }, limits);
    const at100 = operationComplexity(schema, op, fragments, { n: 100 }, limits);
    expect(at10).toBe(1 + 10 * (1 + 1 + 2));
    expect(at100).toBe(1 + 100 * (1 + 1 + 2));
  });

  it("a page of 100 servers with players and 30-day history stays under the default limit", async () => {
    const schema = await buildApiSchema();
    const { op, fragments } =
      split(`{ servers(first: 100) { nodes { id name players playerList { name score } rules { name value }
      history(from: "2026-10-01T00:00:00Z") { points { at playersAvg } mapTimeline { map from to } } } } }`);
    expect(operationComplexity(schema, op, fragments, {}, limits)).toBeLessThan(
      limits.maxComplexity,
    );
  });
});

describe("memory rate limiter", () => {
  it("allows maxRequests per window per client, then says when the window ends", async () => {
    let t = 1_000_000;
    const rl = createMemoryRateLimiter({ maxRequests: 2, windowMs: 1000 }, () => t);
    expect(await rl.hit("a")).toEqual({ allowed: true, count: 1, remaining: 1, resetMs: 1000 });
    expect(await rl.hit("a")).toMatchObject({ allowed: true, remaining: 0 });
    expect(await rl.hit("b")).toMatchObject({ allowed: true, remaining: 1 });
    t += 250;
    expect(await rl.hit("a")).toEqual({ allowed: false, count: 3, remaining: 0, resetMs: 750 });
    t += 750;
    expect(await rl.hit("a")).toMatchObject({ allowed: true, count: 1 });
  });

  it("charges a cost in units; a cost of 0 reads the count without adding to it", async () => {
    const rl = createMemoryRateLimiter({ maxRequests: 10, windowMs: 1000 }, () => 0);
    expect(await rl.hit("a", 6)).toMatchObject({ allowed: true, count: 6, remaining: 4 });
    expect(await rl.hit("a", 0)).toMatchObject({ allowed: true, count: 6 });
    expect(await rl.hit("a", 6)).toMatchObject({ allowed: false, count: 12, remaining: 0 });
    expect(
      await createMemoryRateLimiter({ maxRequests: 0, windowMs: 1000 }).hit("a", 1_000_000),
    ).toMatchObject({ allowed: true });
  });

  it("with Redis unreachable, counts in this process instead of letting every request through", async () => {
    // A closed loopback port: every command fails at once (no offline queue).
    const redis = new IORedis({
      host: "127.0.0.1",
      port: await freePort(),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    const errors: unknown[] = [];
    try {
      const rl = createRedisRateLimiter(
        redis,
        "gsindex-test-unreachable:",
        { maxRequests: 2, windowMs: 60_000 },
        (err) => errors.push(err),
      );
      const decisions = [await rl.hit("a"), await rl.hit("a"), await rl.hit("a")];
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
      expect(errors).toHaveLength(3);
    } finally {
      redis.disconnect();
    }
  });
});

describe("filter parsing", () => {
  it("map patterns", () => {
    expect(mapPattern("DE_Dust2")).toEqual({ exact: "de_dust2" });
    expect(mapPattern("de_*")).toEqual({ like: "de\\_%" });
    expect(mapPattern("*dust*")).toEqual({ like: "%dust%" });
    expect(mapPattern("100%*")).toEqual({ like: "100\\%%" });
  });

  it("addresses and CIDR ranges", () => {
    expect(parseAddressOrCidr("f", "203.0.113.7")).toEqual({ ip: "203.0.113.7" });
    expect(parseAddressOrCidr("f", "2001:db8::/32")).toEqual({ cidr: "2001:db8::/32" });
    expect(parseAddressOrCidr("f", "203.0.113.77/24")).toEqual({ cidr: "203.0.113.0/24" });
    expect(parseAddressOrCidr("f", "::ffff:203.0.113.7")).toEqual({ ip: "203.0.113.7" });
    for (const bad of [
      "203.0.113.0/33",
      "example.org",
      "1.2.3",
      "::/129",
      "",
      "127.1/8",
      "10.0.0.0/",
    ])
      expect(() => parseAddressOrCidr("filter.address", bad)).toThrow(/filter.address/);
  });
});

describe("metrics", () => {
  it("the shared Metrics histogram fits the API latency hook", () => {
    const histogram: LatencyHistogram = new Metrics().apiLatency;
    histogram.observe({ operation: "query:servers" }, 0.01);
  });
});
