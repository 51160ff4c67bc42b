/**
 * Runs a fleet of simulated A2S servers in this process: one UDP socket per server (a UDP port
 * is only reachable through its own socket, and replies must come from the address and port that
 * was asked), all served by one event loop. 10,000 servers = 10,000 file descriptors: check
 * `ulimit -n` (startFleet fails with a message that says so when the limit is hit;
 * `gsindex simulate` raises the soft limit to the hard one for its child processes).
 */
import dgram from "node:dgram";
import { isIP } from "node:net";
import { ipLiteralLookup } from "../protocol";
import type { SimServerSpec } from "./fleet-spec";
import { SimServer, type SimServerOptions } from "./sim-server";

/** SimServerOptions (the player clock) go to every server of the fleet. */
export interface StartFleetOptions extends SimServerOptions {
  /** How many sockets are bound at once while starting. @defaultValue 256 */
  bindConcurrency?: number;
  /** Called when a server cannot be bound (the fleet still starts with the others). Default: the start fails. */
  onBindError?: (spec: SimServerSpec, error: Error) => void;
  /** Encode every server's replies before the start resolves (SimServer.prepareReplies). @defaultValue false: at each one's first query */
  prepareReplies?: boolean;
}

export interface FleetStats {
  requests: number;
  replies: number;
  challenges: number;
  garbage: number;
  datagramsDropped: number;
}

export interface RunningFleet {
  /** The specs as running: a queryPort of 0 is replaced by the port the OS picked. */
  specs: SimServerSpec[];
  /** The simulated server behind each spec (same order), for tests that look at what it received. */
  servers: SimServer[];
  stats(): FleetStats;
  stop(): Promise<void>;
}

interface Bound {
  socket: dgram.Socket;
  server: SimServer;
  spec: SimServerSpec;
}

/** 127.0.0.0/8 or ::1: a simulated fleet is never reachable from the network. */
export function isLoopback(host: string): boolean {
  if (isIP(host) === 4) return host.startsWith("127.");
  return isIP(host) === 6 && new URL(`udp://[${host}]`).hostname === "[::1]";
}

function bindOne(spec: SimServerSpec, serverOptions: SimServerOptions): Promise<Bound> {
  return new Promise<Bound>((resolve, reject) => {
    const family = isIP(spec.host);
    if (!isLoopback(spec.host)) {
      reject(
        new Error(`simulated servers listen on loopback only (127.0.0.0/8, ::1), got ${spec.host}`),
      );
      return;
    }
    // Replies go to rinfo's address, always an IP literal.
    const socket = dgram.createSocket({
      type: family === 6 ? "udp6" : "udp4",
      ipv6Only: family === 6,
      lookup: ipLiteralLookup(family === 6 ? 6 : 4),
    });
    const onError = (err: Error): void => {
      socket.close();
      reject(new Error(`cannot bind ${spec.host}:${spec.queryPort}: ${err.message}`));
    };
    socket.once("error", onError);
    socket.bind({ address: spec.host, port: spec.queryPort, exclusive: true }, () => {
      socket.off("error", onError);
      socket.on("error", () => undefined);
      const port = socket.address().port;
      const running: SimServerSpec =
        spec.queryPort === port
          ? spec
          : {
              ...spec,
              queryPort: port,
              state: { ...spec.state, gamePort: spec.state.gamePort || port },
            };
      const server = new SimServer(running, serverOptions);
      socket.on("message", (request, rinfo) => {
        let reply;
        try {
          reply = server.respond(request, `${rinfo.address}|${rinfo.port}`);
        } catch {
          // A spec the encoders refuse (e.g. a name too long for a datagram): the server stays silent.
          server.stats.garbage += 1;
          return;
        }
        if (reply === null || reply.datagrams.length === 0) return;
        const send = (): void => {
          try {
            for (const d of reply.datagrams) socket.send(d, rinfo.port, rinfo.address);
          } catch {
            // Stopped while a delayed reply was pending.
          }
        };
        if (reply.delayMs > 0) setTimeout(send, reply.delayMs).unref();
        else send();
      });
      resolve({ socket, server, spec: running });
    });
  });
}

/** Starts every server of `specs`; resolves once all are bound. */
export async function startFleet(
  specs: readonly SimServerSpec[],
  options: StartFleetOptions = {},
): Promise<RunningFleet> {
  const bound: Array<Bound | undefined> = new Array(specs.length);
  const concurrency = options.bindConcurrency ?? 256;
  let next = 0;
  let failure: Error | null = null;
  const worker = async (): Promise<void> => {
    while (failure === null && next < specs.length) {
      const index = next++;
      const spec = specs[index] as SimServerSpec;
      try {
        bound[index] = await bindOne(spec, options);
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        if (options.onBindError) options.onBindError(spec, error);
        else failure = error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, specs.length) }, worker));
  const running = bound.filter((b): b is Bound => b !== undefined);
  const stop = async (): Promise<void> => {
    await Promise.all(
      running.map((b) => new Promise<void>((resolve) => b.socket.close(() => resolve()))),
    );
  };
  if (failure !== null) {
    await stop();
    const error: Error = failure;
    if (/EMFILE|ENFILE/.test(error.message)) {
      throw new Error(
        `${error.message}: too many open files for ${specs.length} servers; raise the limit (ulimit -n) or use more processes`,
      );
    }
    throw error;
  }
  if (options.prepareReplies === true) for (const b of running) b.server.prepareReplies();
  return {
    specs: running.map((b) => b.spec),
    servers: running.map((b) => b.server),
    stats: () => {
      const total: FleetStats = {
        requests: 0,
        replies: 0,
        challenges: 0,
        garbage: 0,
        datagramsDropped: 0,
      };
      for (const { server } of running) {
        total.requests += server.stats.requests;
        total.replies += server.stats.repliesSent;
        total.challenges += server.stats.challengesSent;
        total.garbage += server.stats.garbage;
        total.datagramsDropped += server.stats.datagramsDropped;
      }
      return total;
    },
    stop,
  };
}
