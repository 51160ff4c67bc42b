/**
 * Which data a history request reads and how it buckets it: a pure function of the arguments, the
 * clock and the retention settings, so every rule (and every BAD_USER_INPUT) is unit-tested. This is
 * the one place AUTO is resolved and the raw window enforced: the reads (src/history/) read what the
 * plan names.
 */
import { BadUserInputError } from "../errors";
import { DAY_MS, HOUR_MS } from "../../history/time";
import { HistoryResolution } from "./history-resolution";

export { DAY_MS, HOUR_MS };
/** AUTO aims at about this many points. */
export const AUTO_TARGET_POINTS = 300;
/** Explicit HOUR/DAY requests may not produce more points than this. */
export const MAX_POINTS = 10_000;
/** The longest range any history request may span. */
export const MAX_RANGE_MS = 20 * 366 * DAY_MS;
/** Default range when `from` is not given. */
export const DEFAULT_RANGE_MS = DAY_MS;

/** The resolutions stored: raw samples, hourly slots, days. */
export type ReadResolution = Exclude<HistoryResolution, HistoryResolution.AUTO>;
/** The resolutions aggregates are stored at (rollups only). */
export type RollupReadResolution = HistoryResolution.HOUR | HistoryResolution.DAY;

export interface HistoryPlan<R extends ReadResolution = ReadResolution> {
  /** RAW, HOUR or DAY: the table read (samples, hourly slots, days). */
  resolution: R;
  /** Bucket length; 0 for RAW (one point per crawl). */
  bucketMs: number;
  from: Date;
  to: Date;
}

/** Width of one point as src/history reads it at this resolution (RAW: one sample interval). */
export function nativeStepMs(plan: HistoryPlan, sampleIntervalMs: number): number {
  return plan.resolution === HistoryResolution.RAW
    ? sampleIntervalMs
    : plan.resolution === HistoryResolution.HOUR
      ? HOUR_MS
      : DAY_MS;
}

export interface HistorySettings {
  now: Date;
  /** How far back raw samples are kept (HISTORY_RAW_DAYS). */
  rawWindowMs: number;
  /** Longest range a RAW request may ask for. */
  rawMaxRangeMs: number;
  /** How far apart a server's samples are (sampleIntervalMs in src/shared/config.ts). */
  sampleIntervalMs: number;
}

const HOUR_STEPS = [1, 2, 3, 4, 6, 8, 12];

function autoBucket(rangeMs: number): { resolution: RollupReadResolution; bucketMs: number } {
  const hours = Math.ceil(rangeMs / (AUTO_TARGET_POINTS * HOUR_MS));
  const step = HOUR_STEPS.find((h) => h >= hours);
  if (step !== undefined) return { resolution: HistoryResolution.HOUR, bucketMs: step * HOUR_MS };
  return {
    resolution: HistoryResolution.DAY,
    bucketMs: Math.max(1, Math.ceil(rangeMs / (AUTO_TARGET_POINTS * DAY_MS))) * DAY_MS,
  };
}

type HistoryArgs = {
  from?: Date | null;
  to?: Date | null;
  lastDays?: number | null;
  resolution?: HistoryResolution | null;
};

/**
 * With `rawAllowed` false (aggregates, which exist only as rollups) RAW is refused: the plan reads HOUR or DAY.
 * `lastDays` is the range ending now (a saved query or a README example keeps working as days pass), instead of from/to.
 */
export function planHistory(args: HistoryArgs, settings: HistorySettings): HistoryPlan;
export function planHistory(
  args: HistoryArgs,
  settings: HistorySettings,
  rawAllowed: false,
): HistoryPlan<RollupReadResolution>;
export function planHistory(
  args: HistoryArgs,
  settings: HistorySettings,
  rawAllowed = true,
): HistoryPlan {
  if (args.lastDays != null) {
    if (args.from != null || args.to != null)
      throw new BadUserInputError("lastDays", "give lastDays or from/to, not both");
    if (!Number.isInteger(args.lastDays) || args.lastDays < 1)
      throw new BadUserInputError("lastDays", "a whole number of days, at least 1");
  }
  const to = args.to ?? settings.now;
  const from =
    args.from ??
    new Date(to.getTime() - (args.lastDays != null ? args.lastDays * DAY_MS : DEFAULT_RANGE_MS));
  if (Number.isNaN(from.getTime())) throw new BadUserInputError("from", "not a valid time");
  if (Number.isNaN(to.getTime())) throw new BadUserInputError("to", "not a valid time");
  if (from.getTime() >= to.getTime()) throw new BadUserInputError("from", "must be before to");
  const rangeMs = to.getTime() - from.getTime();
  if (rangeMs > MAX_RANGE_MS) throw new BadUserInputError("from", "range longer than 20 years");
  const rawStart = settings.now.getTime() - settings.rawWindowMs;
  const resolution = args.resolution ?? HistoryResolution.AUTO;

  switch (resolution) {
    case HistoryResolution.RAW:
      if (!rawAllowed)
        throw new BadUserInputError(
          "resolution",
          "RAW is not available for aggregates: use HOUR, DAY or AUTO",
        );
      if (from.getTime() < rawStart) {
        throw new BadUserInputError(
          "from",
          `RAW history is kept for ${Math.round(settings.rawWindowMs / DAY_MS)} days only: from must be after ${new Date(rawStart).toISOString()}; use HOUR or DAY further back`,
        );
      }
      if (rangeMs > settings.rawMaxRangeMs) {
        throw new BadUserInputError(
          "from",
          `RAW ranges are limited to ${Math.round(settings.rawMaxRangeMs / HOUR_MS)} hours; use AUTO, HOUR or DAY for longer ranges`,
        );
      }
      return { resolution, bucketMs: 0, from, to };
    case HistoryResolution.HOUR:
    case HistoryResolution.DAY: {
      const bucketMs = resolution === HistoryResolution.HOUR ? HOUR_MS : DAY_MS;
      if (rangeMs / bucketMs > MAX_POINTS)
        throw new BadUserInputError(
          "from",
          `${resolution} over this range gives more than ${MAX_POINTS} points; use AUTO or DAY`,
        );
      return { resolution, bucketMs, from, to };
    }
    case HistoryResolution.AUTO: {
      const rawFits =
        rawAllowed &&
        from.getTime() >= rawStart &&
        rangeMs <= settings.rawMaxRangeMs &&
        rangeMs / settings.sampleIntervalMs <= AUTO_TARGET_POINTS;
      if (rawFits) return { resolution: HistoryResolution.RAW, bucketMs: 0, from, to };
      return { ...autoBucket(rangeMs), from, to };
    }
  }
}
