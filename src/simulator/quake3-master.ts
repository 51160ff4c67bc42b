/**
 * A simulated Quake 3 master (getservers) on loopback: lists the fleet's servers that speak the
 * Quake 3 protocol, through the library's own response encoder, a few records per datagram so that
 * clients must collect until `\EOT`.
 */
import dgram from "node:dgram";
import { encodeQuake3MasterResponse } from "../protocol";
import type { SimServerSpec } from "./fleet-spec";

export interface SimQuake3Master {
  address: { host: string; port: number };
  requests: number;
  close(): Promise<void>;
}

export async function startSimQuake3Master(options: {
  fleet: readonly SimServerSpec[];
  host?: string;
  port?: number;
  perDatagram?: number;
}): Promise<SimQuake3Master> {
  const socket = dgram.createSocket("udp4");
  const host = options.host ?? "127.0.0.1";
  const listed = options.fleet
    .filter((s) => s.protocol === "quake3" && /^\d+\.\d+\.\d+\.\d+$/.test(s.host))
    .map((s) => ({ host: s.host, port: s.queryPort }));
  const master: SimQuake3Master = {
    address: { host, port: 0 },
    requests: 0,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
  socket.on("message", (request, rinfo) => {
    master.requests += 1;
    if (!request.subarray(4).toString("latin1").startsWith("getservers ")) return;
    for (const d of encodeQuake3MasterResponse(listed, { perDatagram: options.perDatagram ?? 50 }))
      socket.send(d, rinfo.port, rinfo.address);
  });
  socket.on("error", () => undefined);
  await new Promise<void>((resolve) => socket.bind(options.port ?? 0, host, resolve));
  master.address.port = socket.address().port;
  return master;
}
