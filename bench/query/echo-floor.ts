/**
 * Child process: the floor under any UDP query client on this machine. A bare node:dgram loop over
 * one socket sends A2S_INFO requests to the fleet's servers (the same simulator the contenders query)
 * with `concurrency` requests in flight and sends the next one as each reply arrives, doing nothing
 * with the replies. Its CPU per datagram (sent or received) is what node:dgram and the kernel cost;
 * a query library cannot spend less than that times its datagrams.
 * node dist-bench/bench/query/echo-floor.js --fleet FILE --concurrency C --round-trips N [--passes P]
 * --passes P: P more loops of N round trips after the first, in the same process, as the contenders
 * get (contender.ts): the first loop is the cold floor, the later ones together the warm floor.
 */
import dgram from "node:dgram";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { processCost, reportResult } from "../lib/child";

export interface FloorPass {
  sent: number;
  received: number;
  wallMs: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  /** Client CPU (user + system) per datagram sent or received, in milliseconds. */
  cpuMsPerDatagram: number;
}

export interface FloorResult {
  concurrency: number;
  /** The first loop of the process. */
  cold: FloorPass;
  /** The loops after it taken together; null with one loop. */
  warm: FloorPass | null;
  peakRssBytes: number;
}

/** A2S_INFO without a challenge: every simulated server answers it (with the data or a challenge). */
const REQUEST = Buffer.concat([
  Buffer.from([0xff, 0xff, 0xff, 0xff, 0x54]),
  Buffer.from("Source Engine Query\0", "latin1"),
]);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      fleet: { type: "string" },
      concurrency: { type: "string" },
      "round-trips": { type: "string" },
      passes: { type: "string" },
    },
  });
  const fleet = JSON.parse(readFileSync(values.fleet ?? "", "utf8")) as {
    servers: SimServerSpec[];
  };
  const targets = fleet.servers.map((s) => ({ host: s.host, port: s.queryPort }));
  const concurrency = Number(values.concurrency ?? 100);
  const roundTrips = Number(values["round-trips"] ?? 40_000);
  const passes = Number(values.passes ?? 0);
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, resolve));
  socket.setRecvBufferSize(4 * 1024 * 1024);
  let next = 0;
  let onMessage: () => void = () => undefined;
  socket.on("message", () => onMessage());

  const loop = async (): Promise<FloorPass> => {
    let sent = 0;
    let received = 0;
    let inFlight = 0;
    let lastReply = performance.now();
    const sendOne = (): void => {
      const t = targets[next++ % targets.length] as { host: string; port: number };
      sent += 1;
      inFlight += 1;
      socket.send(REQUEST, t.port, t.host);
    };
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await new Promise<void>((resolve) => {
      // A lost datagram would shrink the window for good: after a quiet spell, count the rest as lost.
      const refill = setInterval(() => {
        if (performance.now() - lastReply < 200) return;
        if (sent >= roundTrips) {
          clearInterval(refill);
          resolve();
          return;
        }
        inFlight = 0;
        while (inFlight < concurrency && sent < roundTrips) sendOne();
      }, 100);
      onMessage = () => {
        received += 1;
        inFlight -= 1;
        lastReply = performance.now();
        if (sent < roundTrips) sendOne();
        else if (inFlight <= 0 || received >= roundTrips) {
          clearInterval(refill);
          resolve();
        }
      };
      while (inFlight < concurrency && sent < roundTrips) sendOne();
    });
    const wallMs = performance.now() - started;
    const cost = processCost(cpuBefore);
    // Late replies of this loop must not count in the next one.
    onMessage = () => undefined;
    await new Promise((resolve) => setTimeout(resolve, 50));
    return {
      sent,
      received,
      wallMs,
      cpuUserMs: cost.cpuUserMs,
      cpuSystemMs: cost.cpuSystemMs,
      cpuMsPerDatagram: (cost.cpuUserMs + cost.cpuSystemMs) / (sent + received),
    };
  };

  const loops: FloorPass[] = [];
  for (let n = 0; n <= passes; n++) loops.push(await loop());
  socket.close();
  const warmLoops = loops.slice(1);
  const sum = (f: (p: FloorPass) => number): number => warmLoops.reduce((a, p) => a + f(p), 0);
  const warm: FloorPass | null =
    warmLoops.length === 0
      ? null
      : {
          sent: sum((p) => p.sent),
          received: sum((p) => p.received),
          wallMs: sum((p) => p.wallMs),
          cpuUserMs: sum((p) => p.cpuUserMs),
          cpuSystemMs: sum((p) => p.cpuSystemMs),
          cpuMsPerDatagram:
            sum((p) => p.cpuUserMs + p.cpuSystemMs) / sum((p) => p.sent + p.received),
        };
  const result: FloorResult = {
    concurrency,
    cold: loops[0] as FloorPass,
    warm,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  reportResult(result);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
