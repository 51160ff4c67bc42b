/**
 * One slice of the scale bench's fleet, served in this process (`gsindex simulate` does the same but
 * cannot say how many requests its servers received). Prints {"ready":...} once every socket is bound;
 * each "stats" line on stdin is answered with {"stats": FleetStats} on stdout, so the bench can count
 * the datagrams a crawl sent: a query batch run twice shows up there even though the database's keys
 * keep it from writing twice. Exits when stdin closes.
 * Args: <layout JSON> <slice>.
 */
import { createInterface } from "node:readline";
import {
  fleetOptions,
  layoutSpecs,
  sliceRange,
  type FleetLayout,
} from "../../src/simulator/fleet-processes";
import { startFleet } from "../../src/simulator/fleet";

async function main(): Promise<void> {
  const layout = JSON.parse(process.argv[2] ?? "") as FleetLayout;
  const slice = Number(process.argv[3]);
  const { start, end } = sliceRange(layout, slice);
  const fleet = await startFleet(layoutSpecs(layout).slice(start, end), fleetOptions(layout));
  process.stdout.write(`${JSON.stringify({ ready: true, slice, servers: fleet.specs.length })}\n`);
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    if (line.trim() === "stats")
      process.stdout.write(`${JSON.stringify({ stats: fleet.stats() })}\n`);
  });
  await new Promise<void>((resolve) => lines.once("close", resolve));
  await fleet.stop();
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
