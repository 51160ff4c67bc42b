/**
 * In a child: profile only the measured section (not module loading or setup) with the inspector's
 * sampling profiler, when the parent asked for it with --profile-out FILE.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

export interface SectionProfiler {
  stop(): Promise<void>;
}

export async function startSectionProfile(file: string | undefined): Promise<SectionProfiler> {
  if (file === undefined || file === "") return { stop: async () => undefined };
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return {
    stop: async () => {
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}
