/**
 * Child process: one contender queries every server of a fleet file at a fixed concurrency, then
 * checks its answers against the specs (after the clock stops) and reports.
 * node dist-bench/bench/query/contender.js --lib gsindex --fleet FILE --concurrency C --send-wait-ms W --sends N
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { SimServerSpec } from "../../src/simulator/fleet-spec";
import { processCost, reportResult, type ProcessCost } from "../lib/child";
import { startSectionProfile } from "../lib/cpu-profile";
import { score, type Answer, type Correctness } from "./answer";
import { makeContender, type ContenderId } from "./contenders";
import { countDatagrams } from "./datagram-count";

export interface ContenderResult extends ProcessCost {
  id: ContenderId;
  label: string;
  servers: number;
  concurrency: number;
  wallMs: number;
  serversPerSecond: number;
  correctness: Correctness;
  /** UDP datagrams the process sent and received per server (node:dgram counted the same way for every contender). */
  datagramsSentPerServer: number;
  datagramsReceivedPerServer: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      lib: { type: "string" },
      fleet: { type: "string" },
      concurrency: { type: "string" },
      "send-wait-ms": { type: "string" },
      sends: { type: "string" },
      limit: { type: "string" },
      "profile-out": { type: "string" },
    },
  });
  const fleet = JSON.parse(readFileSync(values.fleet ?? "", "utf8")) as {
    servers: SimServerSpec[];
  };
  const specs =
    values.limit === undefined ? fleet.servers : fleet.servers.slice(0, Number(values.limit));
  const concurrency = Number(values.concurrency ?? 100);
  const counts = countDatagrams();
  const contender = makeContender(values.lib as ContenderId, {
    sendWaitMs: Number(values["send-wait-ms"] ?? 500),
    sends: Number(values.sends ?? 2),
  });
  const raws: unknown[] = new Array(specs.length);

  const profiler = await startSectionProfile(values["profile-out"]);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < specs.length) {
      const n = next++;
      const spec = specs[n] as SimServerSpec;
      try {
        raws[n] = await contender.query(spec.host, spec.queryPort);
      } catch (err) {
        raws[n] = { error: err instanceof Error ? err.message : String(err) } satisfies Answer;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, specs.length) }, worker));
  const wallMs = performance.now() - started;
  const cost = processCost(cpuBefore);
  await profiler.stop();
  await contender.close();
  const answers: Answer[] = raws.map((raw) => contender.answer(raw));

  const result: ContenderResult = {
    id: contender.id,
    label: contender.label,
    servers: specs.length,
    concurrency,
    wallMs,
    serversPerSecond: (specs.length * 1000) / wallMs,
    ...cost,
    correctness: score(specs, answers),
    datagramsSentPerServer: counts.sent / specs.length,
    datagramsReceivedPerServer: counts.received / specs.length,
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
