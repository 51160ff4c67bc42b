/**
 * A `lookup` for node:dgram sockets that are only ever given IP literals: it answers at once with the
 * address as given. node:dgram runs every send through its socket's lookup, by default dns.lookup, which
 * answers an IP literal a tick later; that is a call, a closure and a nextTick per datagram sent.
 */
import type dgram from "node:dgram";

export function ipLiteralLookup(family: 4 | 6): dgram.SocketOptions["lookup"] {
  const lookup = (
    address: string,
    _options: unknown,
    callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
  ): void => callback(null, address, family);
  return lookup as unknown as dgram.SocketOptions["lookup"];
}
