import { ConfigError, loadConfig, sampleIntervalMs } from "../../src/shared/config";

describe("loadConfig", () => {
  it("has working defaults", () => {
    const c = loadConfig({});
    expect(c.databaseUrl).toBe("postgres://postgres@127.0.0.1:5432/gsindex");
    expect(c.redisUrl).toBe("redis://127.0.0.1:6379");
    expect(c.crawlIntervalMs).toBe(300_000);
    expect(c.historyRawDays).toBe(7);
    expect(c.masterSources).toEqual([]);
    expect(c.addressAllowList).toEqual([]);
    expect(c.roles).toEqual(["api", "scheduler", "worker", "management"]);
  });

  it("queries known servers from the index by default, as often as CRAWL_INTERVAL_MS says", () => {
    expect(loadConfig({})).toMatchObject({ queryFromIndex: true, queryIntervalMs: 300_000 });
    expect(sampleIntervalMs(loadConfig({}))).toBe(300_000);
    // One setting still says how often a server is queried, unless QUERY_INTERVAL_MS says otherwise.
    const crawlMinute = loadConfig({ CRAWL_INTERVAL_MS: "60000" });
    expect(crawlMinute.queryIntervalMs).toBe(60_000);
    expect(sampleIntervalMs(crawlMinute)).toBe(60_000);
    const split = loadConfig({ CRAWL_INTERVAL_MS: "1800000", QUERY_INTERVAL_MS: "120000" });
    expect(split).toMatchObject({ crawlIntervalMs: 1_800_000, queryIntervalMs: 120_000 });
    expect(sampleIntervalMs(split)).toBe(120_000);
    // Off, a server is queried once per crawl of its source.
    const off = loadConfig({
      QUERY_FROM_INDEX: "0",
      CRAWL_INTERVAL_MS: "1800000",
      QUERY_INTERVAL_MS: "120000",
    });
    expect(off.queryFromIndex).toBe(false);
    expect(sampleIntervalMs(off)).toBe(1_800_000);
  });

  it("parses sources and the allow-list", () => {
    const c = loadConfig({
      MASTER_SOURCES: JSON.stringify([
        { name: "sim", kind: "VALVE_UDP", host: "127.0.0.1", port: 27011, regions: [0, 255] },
      ]),
      ADDRESS_ALLOW_LIST: "127.0.0.0/8, ::1, localhost",
    });
    expect(c.masterSources[0]).toMatchObject({
      name: "sim",
      kind: "VALVE_UDP",
      filter: "",
      enabled: true,
      regions: [0, 255],
    });
    expect(c.addressAllowList.map((e) => (e.kind === "cidr" ? e.text : e.name))).toEqual([
      "127.0.0.0/8",
      "::1",
      "localhost",
    ]);
  });

  it("parses the management port settings of issue 12", () => {
    expect(loadConfig({})).toMatchObject({
      managementTrustedCidrs: [],
      managementIdleTimeoutMs: 30_000,
    });
    const c = loadConfig({
      MANAGEMENT_TRUSTED_CIDRS: "203.0.113.0/24, 198.51.100.7, 2001:db8::/32",
      MANAGEMENT_IDLE_TIMEOUT_MS: "0",
    });
    expect(c.managementTrustedCidrs).toEqual([
      "203.0.113.0/24",
      "198.51.100.7/32",
      "2001:db8::/32",
    ]);
    expect(c.managementIdleTimeoutMs).toBe(0);
    expect(() => loadConfig({ MANAGEMENT_TRUSTED_CIDRS: "relay.example.org" })).toThrow(
      /MANAGEMENT_TRUSTED_CIDRS: 'relay.example.org'/,
    );
    expect(() => loadConfig({ MANAGEMENT_IDLE_TIMEOUT_MS: "-5" })).toThrow(
      /MANAGEMENT_IDLE_TIMEOUT_MS/,
    );
  });

  it("names every bad variable at once, and hides secrets", () => {
    let error: unknown;
    try {
      loadConfig({
        CRAWL_INTERVAL_MS: "soon",
        QUERY_TIMEOUT_MS: "-1",
        DATABASE_URL: "mysql://secret@x/y",
        LOG_LEVEL: "loud",
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join("\n");
    expect(problems).toMatch(/CRAWL_INTERVAL_MS: .*"soon"/);
    expect(problems).toMatch(/QUERY_TIMEOUT_MS: .*"-1"/);
    expect(problems).toMatch(/LOG_LEVEL: .*"loud"/);
    expect(problems).toMatch(/DATABASE_URL: .*value hidden/);
    expect(problems).not.toContain("secret");
  });

  it("rejects bad sources and allow-list entries with their position", () => {
    expect(() =>
      loadConfig({ MASTER_SOURCES: '[{"name":"Bad Name","kind":"VALVE_UDP","host":"x"}]' }),
    ).toThrow(/MASTER_SOURCES\[0.name\]/);
    expect(() => loadConfig({ MASTER_SOURCES: "{" })).toThrow(/MASTER_SOURCES: not valid JSON/);
    expect(() =>
      loadConfig({ MASTER_SOURCES: '[{"name":"a","kind":"GOPHER","host":"x"}]' }),
    ).toThrow(/MASTER_SOURCES\[0.kind\]/);
    expect(() => loadConfig({ ADDRESS_ALLOW_LIST: "10.0.0.0/99" })).toThrow(
      /ADDRESS_ALLOW_LIST: '10.0.0.0\/99'/,
    );
    expect(() => loadConfig({ SERVE_ROLES: "api,cook" })).toThrow(/unknown role 'cook'/);
  });

  it("keeps the farm rule exemption apart from the allow-list (issue 15.1)", () => {
    expect(loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8" }).farmRuleExemptRanges).toEqual([]);
    expect(
      loadConfig({ FARM_RULE_EXEMPT_RANGES: "127.0.0.90, 203.0.113.0/24, 2001:db8::/32" })
        .farmRuleExemptRanges,
    ).toEqual(["127.0.0.90/32", "203.0.113.0/24", "2001:db8::/32"]);
    expect(() => loadConfig({ FARM_RULE_EXEMPT_RANGES: "hosting.example.org" })).toThrow(
      /FARM_RULE_EXEMPT_RANGES: 'hosting.example.org'/,
    );
  });
});
