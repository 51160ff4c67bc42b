/**
 * `node dist-bench/bench/crawl/address-check.js [--servers 100000] [--rounds 5] [--baseline DIR]`: CPU and
 * garbage per call of the address policy's check (src/crawler/address-policy.ts), which the crawl makes for
 * every server it lists and again for every server it queries, and of the country lookup
 * (src/crawler/geo/country-lookup.ts) a listing makes for every server, over the bench fleet's addresses (the
 * simulator's loopback hosts, allow-listed as in the crawl bench) and as many public ones. With `--baseline DIR`
 * (a checkout with its dist built), that build's functions run in the same process, alternated round by round.
 */
import { createAddressPolicy, type AddressPolicy } from "../../src/crawler/address-policy";
import { countryOfIp, preloadCountryTables } from "../../src/crawler/geo/country-lookup";
import { loadConfig } from "../../src/shared/config";
import {
  baselineModule,
  bytesPerCall,
  pieceArgs,
  printAlternatedRounds,
  usPerCall,
} from "../lib/per-call";

type MakePolicy = typeof createAddressPolicy;
type CountryOf = typeof countryOfIp;

function main(): void {
  const { servers, rounds, baseline } = pieceArgs(100_000);
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
  preloadCountryTables();
  const contenders: Array<{ label: string; policy: AddressPolicy; countryOf: CountryOf }> = [
    { label: "this build", policy: createAddressPolicy(allowList), countryOf: countryOfIp },
  ];
  if (baseline !== undefined) {
    const baselinePolicy = baselineModule<{ createAddressPolicy: MakePolicy }>(
      baseline,
      "dist/crawler/address-policy.js",
    );
    const baselineGeo = baselineModule<{
      countryOfIp: CountryOf;
      preloadCountryTables: () => void;
    }>(baseline, "dist/crawler/geo/country-lookup.js");
    baselineGeo.preloadCountryTables();
    contenders.unshift({
      label: `baseline (${baseline})`,
      policy: baselinePolicy.createAddressPolicy(allowList),
      countryOf: baselineGeo.countryOfIp,
    });
  }
  const publicHosts = hosts.filter((_, i) => i % 2 === 1);
  // Warm-up: every contender's code optimised before any round counts.
  for (const c of contenders) {
    usPerCall((h) => c.policy.check(h), hosts, 2);
    usPerCall(c.countryOf, publicHosts, 2);
  }
  console.log(
    `${hosts.length} addresses, half loopback (allow-listed), half public (the country lookups: the public half)`,
  );
  printAlternatedRounds(
    contenders,
    rounds,
    (c) => {
      const check = `${usPerCall((h) => c.policy.check(h), hosts, 3).toFixed(2)} us, ${bytesPerCall((i) => c.policy.check(hosts[i % hosts.length]!)).toFixed(0)} B`;
      const country = `${usPerCall(c.countryOf, publicHosts, 3).toFixed(2)} us, ${bytesPerCall((i) => c.countryOf(publicHosts[i % publicHosts.length]!)).toFixed(0)} B`;
      return `${c.label}: check ${check}, country ${country}`;
    },
    "call",
  );
}

main();
