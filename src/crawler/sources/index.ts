/** Builds the list source for a master_source row, by kind. */
import type { Config } from "../../shared/config";
import { createAddressPolicy, parseBlockedRanges, type AddressPolicy } from "../address-policy";
import type { ListSourceFactory, SourceRecord } from "../list-source";
import { createMemoryPacer, type MasterPacer } from "../master-pace";
import { createOutboundGuard, type LookupAll } from "../outbound-guard";
import { createAddressListSource } from "./address-list-source";
import { createIndexSource } from "./index-source";
import { createManagementSource } from "./management-source";
import { createSteamWebApiSource } from "./steam-web-api-source";
import { createValveMasterSource } from "./valve-master-source";

export type ListSourceConfig = Pick<
  Config,
  "masterTimeoutMs" | "steamWebApiKey" | "addressAllowList" | "managementHost" | "managementPort"
>;

/**
 * Every contact a source makes goes through an OutboundGuard over the address policy (ADDRESS_ALLOW_LIST):
 * `lookup` replaces the system resolver (tests map names without DNS); `blockedRanges` gives the blocked_range
 * rows (CIDR text) at each contact. gsindex's own management server on
 * loopback (the `local-management` source of `gsindex serve`) is always reachable by MANAGEMENT sources.
 * Valve masters are paced per master address across every listing made through this factory, or through
 * `masterPacer` across processes.
 */
export function createListSourceFactory(
  config: ListSourceConfig,
  overrides: Partial<Record<SourceRecord["kind"], ListSourceFactory>> = {},
  options: {
    lookup?: LookupAll;
    blockedRanges?: () => Promise<readonly string[]>;
    /** The pace Valve masters' listings share (master-pace.ts). @defaultValue this process's own */
    masterPacer?: MasterPacer;
  } = {},
): ListSourceFactory {
  const pacer = options.masterPacer ?? createMemoryPacer();
  const blockedRanges = options.blockedRanges;
  const policy = blockedRanges
    ? async (): Promise<AddressPolicy> =>
        createAddressPolicy(config.addressAllowList, parseBlockedRanges(await blockedRanges()))
    : createAddressPolicy(config.addressAllowList);
  const lookup = options.lookup ? { lookup: options.lookup } : {};
  const guard = createOutboundGuard({ policy, ...lookup });
  const ownManagement = new Set(["127.0.0.1", "::1", config.managementHost]);
  const managementGuard = createOutboundGuard({
    policy,
    ...lookup,
    exempt: (address, port) => port === config.managementPort && ownManagement.has(address),
  });
  return (source) => {
    const override = overrides[source.kind];
    if (override) return override(source);
    switch (source.kind) {
      case "VALVE_UDP":
        return createValveMasterSource(source, {
          timeoutMs: config.masterTimeoutMs,
          guard,
          pacer,
        });
      case "STEAM_WEB_API":
        return createSteamWebApiSource(source, {
          key: config.steamWebApiKey,
          timeoutMs: config.masterTimeoutMs,
          guard,
        });
      case "ADDRESS_LIST":
        return createAddressListSource(source, { guard });
      case "MANAGEMENT":
        return createManagementSource(source, {
          timeoutMs: config.masterTimeoutMs,
          guard: managementGuard,
        });
      case "INDEX":
        return createIndexSource();
    }
  };
}
