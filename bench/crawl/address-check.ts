/**
 * `node dist-bench/bench/crawl/address-check.js [--servers 100000] [--rounds 5] [--baseline DIR]`: CPU and
 * garbage per call of the address policy's check (src/crawler/address-policy.ts), which the crawl makes for
 * every server it lists and again for every server it queries, over the bench fleet's addresses (the
 * simulator's loopback hosts, allow-listed as in the crawl bench) and as many public ones. With `--baseline DIR`
 * (a checkout with its dist built), that build's check runs in the same process, alternated round by round.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { createAddressPolicy, type AddressPolicy } from "../../src/crawler/address-policy";
import { loadConfig } from "../../src/shared/config";
import { bytesPerCall } from "../lib/garbage";

type MakePolicy = typeof createAddressPolicy;

/** Microseconds of CPU per check over `passes` passes of every host. */
function usPerCheck(policy: AddressPolicy, hosts: string[], passes: number): number {
  const start = process.cpuUsage();
  for (let p = 0; p < passes; p++) for (const host of hosts) policy.check(host);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (hosts.length * passes);
}

function main(): void {
  const { values } = parseArgs({
    options: {
      servers: { type: "string" },
      rounds: { type: "string" },
      baseline: { type: "string" },
    },
  });
  const servers = Number(values.servers ?? 100_000);
  const rounds = Number(values.rounds ?? 5);
  // Half loopback, as the bench fleet's hosts (127.88.x.y), half public unicast addresses.
  const hosts: string[] = [];
  for (let i = 0; i < servers; i++) {
    hosts.push(
      i % 2 === 0
        ? `127.88.${(i >> 8) & 0xff}.${i & 0xff}`
        : `${11 + (i % 150)}.${(i * 7) & 0xff}.${(i * 13) & 0xff}.${(i * 31) & 0xff}`,
    );
  }
  const allowList = loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8" }).addressAllowList;
  const contenders: Array<{ label: string; policy: AddressPolicy }> = [
    { label: "this build", policy: createAddressPolicy(allowList) },
  ];
  if (values.baseline !== undefined) {
    const module = path.resolve(values.baseline, "dist/crawler/address-policy.js");
    const baseline = require(module) as { createAddressPolicy: MakePolicy };
    contenders.unshift({
      label: `baseline (${values.baseline})`,
      policy: baseline.createAddressPolicy(allowList),
    });
  }
  // Warm-up: every contender's code optimised before any round counts.
  for (const c of contenders) usPerCheck(c.policy, hosts, 2);
  console.log(`${hosts.length} addresses, half loopback (allow-listed), half public`);
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? contenders : [...contenders].reverse();
    const figures = order.map(
      (c) =>
        `${c.label} ${usPerCheck(c.policy, hosts, 3).toFixed(2)} us, ${bytesPerCall((i) => c.policy.check(hosts[i % hosts.length]!)).toFixed(0)} B`,
    );
    console.log(`round ${round}: ${figures.join("; ")} per check`);
  }
}

main();
