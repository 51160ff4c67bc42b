/** An OutboundGuard for tests: loopback allowed (127.0.0.0/8, ::1), everything else refused as in production. */
import { createAddressPolicy } from "../../src/crawler/address-policy";
import {
  createOutboundGuard,
  type LookupAll,
  type OutboundGuard,
} from "../../src/crawler/outbound-guard";
import { loadConfig } from "../../src/shared/config";

/** `lookup` replaces DNS (tests never query it); the default refuses every name. */
export function loopbackGuard(
  lookup: LookupAll = (name) => Promise.reject(new Error(`no DNS in tests (${name})`)),
): OutboundGuard {
  return createOutboundGuard({
    policy: createAddressPolicy(
      loadConfig({ ADDRESS_ALLOW_LIST: "127.0.0.0/8,::1" }).addressAllowList,
    ),
    lookup,
  });
}
