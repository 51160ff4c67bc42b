import {
  createAddressPolicy,
  ipLiteral,
  isRelayAddress,
  parseBlockedRanges,
} from "../../src/crawler/address-policy";
import { loadConfig } from "../../src/shared/config";

describe("address policy", () => {
  const strict = createAddressPolicy([]);

  it.each([
    ["8.8.8.8", true],
    ["2a00:1450:4001::1", true],
    ["::ffff:8.8.8.8", true],
    ["127.0.0.1", false],
    ["::1", false],
    ["10.1.2.3", false],
    ["172.16.0.1", false],
    ["192.168.0.10", false],
    ["fd40:9dc7:b528::1", false],
    ["169.254.5.6", false],
    ["100.64.0.1", false],
    ["0.0.0.0", false],
    ["::", false],
    ["224.0.0.1", false],
    ["255.255.255.255", false],
    ["192.0.2.1", false],
    ["2001:db8::1", false],
    ["::ffff:10.0.0.1", false],
  ])("%s queryable by default: %s", (host, queryable) => {
    expect(strict.check(host).queryable).toBe(queryable);
  });

  it("never resolves host names, and refuses odd IPv4 spellings", () => {
    expect(strict.check("bombergame.example.org")).toEqual({
      queryable: false,
      ip: null,
      reason: "host-name",
    });
    expect(strict.check("127.1").queryable).toBe(false);
    expect(strict.check("0x7f.0.0.1").queryable).toBe(false);
  });

  it.each([
    "010.0.0.1",
    "8.8.8.08",
    "8.8.8.256",
    "8.8.8",
    "8.8.8.8.8",
    "8.8.8.8.",
    ".8.8.8.8",
    "8..8.8",
    " 8.8.8.8",
    "8.8.8.8 ",
    "8.8.8.-1",
    "８.8.8.8",
    "",
  ])("%j is no IP literal: never queried, no inet value", (host) => {
    const verdict = strict.check(host);
    expect(verdict.queryable).toBe(false);
    expect(verdict.ip).toBeNull();
    expect(ipLiteral(host)).toBeNull();
  });

  it("keeps a dotted quad's own text as its inet value, octet by octet", () => {
    expect(strict.check("8.8.4.4")).toEqual({ queryable: true, ip: "8.8.4.4", reason: "public" });
    expect(strict.check("[1.0.0.1]")).toEqual({ queryable: true, ip: "1.0.0.1", reason: "public" });
    expect(strict.check("0.0.0.0")).toEqual({
      queryable: false,
      ip: "0.0.0.0",
      reason: "non-public",
    });
    expect(strict.check("255.255.255.254").reason).toBe("non-public");
    // The octets, not only the text, decide: 10.x is private, 100.x and 110.x are not.
    expect(strict.check("10.200.1.2").reason).toBe("non-public");
    expect(strict.check("110.200.1.2").reason).toBe("public");
    expect(strict.check("100.63.255.255").reason).toBe("public");
    expect(strict.check("100.64.0.0").reason).toBe("non-public");
    expect(strict.check("169.254.255.255").reason).toBe("relay");
    expect(strict.check("169.253.255.255").reason).toBe("public");
  });

  it("lets the allow-list open loopback (tests, demo) and named hosts", () => {
    const policy = createAddressPolicy(
      loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8,::1,localhost" }).addressAllowList,
    );
    expect(policy.check("127.0.0.5")).toEqual({
      queryable: true,
      ip: "127.0.0.5",
      reason: "allow-listed",
    });
    expect(policy.check("::1").queryable).toBe(true);
    expect(policy.check("localhost").queryable).toBe(true);
    expect(policy.check("10.0.0.1").queryable).toBe(false);
    expect(policy.check("192.168.0.10").queryable).toBe(false);
  });

  it("flags relays and honours blocked ranges over everything", () => {
    expect(strict.check("169.254.1.1").reason).toBe("relay");
    expect(isRelayAddress("169.254.1.1")).toBe(true);
    expect(isRelayAddress("8.8.8.8")).toBe(false);
    const policy = createAddressPolicy(
      loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8" }).addressAllowList,
      parseBlockedRanges(["127.0.0.9/32", "8.8.0.0/16"]),
    );
    expect(policy.check("127.0.0.9").reason).toBe("blocked");
    expect(policy.check("8.8.8.8").reason).toBe("blocked");
    expect(policy.check("127.0.0.8").queryable).toBe(true);
  });

  it("normalises IP literals for the inet column", () => {
    expect(ipLiteral("::ffff:8.8.8.8")).toBe("8.8.8.8");
    expect(ipLiteral("[::1]")).toBe("::1");
    expect(ipLiteral("example.org")).toBeNull();
  });
});
