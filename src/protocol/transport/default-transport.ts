/**
 * The one process-wide UDP transport every query uses when its caller passes none (A2S, the older
 * protocols, the Quake 3 master): one socket pair shared by all of them, created on first use.
 */
import { UdpTransport } from "./udp-transport";

let sharedTransport: UdpTransport | null = null;

/** The transport queries use when none is given. Its sockets never keep an idle process alive. */
export function defaultTransport(): UdpTransport {
  sharedTransport ??= new UdpTransport();
  return sharedTransport;
}
