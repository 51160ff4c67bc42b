import { BadUserInputError } from "../../src/graphql/errors";
import {
  AUTO_TARGET_POINTS,
  DAY_MS,
  HOUR_MS,
  planHistory,
} from "../../src/graphql/history/history-plan";
import { HistoryResolution as R } from "../../src/graphql/history/history-resolution";
import { rebucketHistory, rebucketPopulation } from "../../src/graphql/history/history-buckets";

const now = new Date("2026-11-22T12:00:00Z");
const settings = {
  now,
  rawWindowMs: 7 * DAY_MS,
  rawMaxRangeMs: 48 * HOUR_MS,
  sampleIntervalMs: 300_000,
};
const ago = (ms: number) => new Date(now.getTime() - ms);
const argOf = (f: () => unknown): unknown => {
  try {
    f();
  } catch (err) {
    if (err instanceof BadUserInputError) return err.extensions["argumentName"];
    throw err;
  }
  return undefined;
};

describe("planHistory", () => {
  it("AUTO keeps every range to a few hundred points", () => {
    for (const range of [
      HOUR_MS,
      DAY_MS,
      3 * DAY_MS,
      30 * DAY_MS,
      90 * DAY_MS,
      365 * DAY_MS,
      10 * 365 * DAY_MS,
    ]) {
      const plan = planHistory({ from: ago(range), to: now }, settings);
      const points =
        plan.resolution === R.RAW ? range / settings.sampleIntervalMs : range / plan.bucketMs;
      expect(points).toBeLessThanOrEqual(AUTO_TARGET_POINTS);
      expect(points).toBeGreaterThanOrEqual(range <= DAY_MS ? 1 : 24);
    }
  });

  it("AUTO uses raw samples only inside the window, and day rows for long ranges", () => {
    expect(planHistory({ from: ago(6 * HOUR_MS) }, settings).resolution).toBe(R.RAW);
    expect(
      planHistory({ from: ago(10 * DAY_MS), to: ago(10 * DAY_MS - 6 * HOUR_MS) }, settings)
        .resolution,
    ).toBe(R.HOUR);
    expect(planHistory({ from: ago(30 * DAY_MS) }, settings)).toMatchObject({
      resolution: R.HOUR,
      bucketMs: 3 * HOUR_MS,
    });
    expect(planHistory({ from: ago(365 * DAY_MS) }, settings)).toMatchObject({
      resolution: R.DAY,
      bucketMs: 2 * DAY_MS,
    });
  });

  it("defaults to the last 24 hours", () => {
    expect(planHistory({}, settings)).toMatchObject({ from: ago(DAY_MS), to: now });
  });

  it("lastDays is the range ending now, and is not given with from or to", () => {
    expect(planHistory({ lastDays: 30 }, settings)).toMatchObject({
      from: ago(30 * DAY_MS),
      to: now,
      resolution: R.HOUR,
    });
    expect(argOf(() => planHistory({ lastDays: 30, from: ago(DAY_MS) }, settings))).toBe(
      "lastDays",
    );
    expect(argOf(() => planHistory({ lastDays: 0 }, settings))).toBe("lastDays");
  });

  it("names the argument of every refusal", () => {
    expect(argOf(() => planHistory({ from: now, to: ago(1) }, settings))).toBe("from");
    expect(
      argOf(() =>
        planHistory({ from: ago(8 * DAY_MS), to: ago(7.5 * DAY_MS), resolution: R.RAW }, settings),
      ),
    ).toBe("from");
    expect(argOf(() => planHistory({ from: ago(3 * DAY_MS), resolution: R.RAW }, settings))).toBe(
      "from",
    );
    expect(
      argOf(() => planHistory({ from: ago(2 * 365 * DAY_MS), resolution: R.HOUR }, settings)),
    ).toBe("from");
    expect(argOf(() => planHistory({ from: ago(30 * 365 * DAY_MS) }, settings))).toBe("from");
    expect(argOf(() => planHistory({ resolution: R.RAW }, settings, false))).toBe("resolution");
    expect(argOf(() => planHistory({ from: new Date(Number.NaN) }, settings))).toBe("from");
  });
});

describe("re-bucketing", () => {
  const p = (
    at: string,
    samples: number,
    avg: number,
    online: number,
    map: string | null,
    min: number | null = avg,
    max: number | null = avg,
  ) => ({
    at: new Date(at),
    samples,
    playersAvg: avg,
    onlineShare: online,
    playersMin: min,
    playersMax: max,
    botsMax: 1,
    maxPlayers: null,
    map,
    pingMs: null,
  });

  it("merges hourly points into wider buckets weighted by samples", () => {
    const out = rebucketHistory(
      [
        p("2026-11-20T00:00:00Z", 12, 10, 1, "a"),
        p("2026-11-20T01:00:00Z", 4, 2, 0.5, "b"),
        p("2026-11-20T03:00:00Z", 6, 6, 1, "b"),
      ],
      3 * HOUR_MS,
      HOUR_MS,
    );
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({
      at: new Date("2026-11-20T00:00:00Z"),
      samples: 16,
      playersMin: 2,
      playersMax: 10,
      bots: 1,
      map: "a",
    });
    expect(out[0]?.playersAvg).toBeCloseTo((12 * 10 + 4 * 2) / 16);
    expect(out[0]?.onlineShare).toBeCloseTo((12 + 2) / 16);
    expect(out[1]).toMatchObject({ at: new Date("2026-11-20T03:00:00Z"), samples: 6, map: "b" });
  });

  it("passes native points through when no wider bucket is asked", () => {
    expect(rebucketHistory([p("2026-11-20T00:00:00Z", 1, 3, 1, "x")], 0, 300_000)).toHaveLength(1);
  });

  it("population: averages of averages, maxima of peaks", () => {
    const q = (at: string, so: number, pa: number, pp: number) => ({
      at: new Date(at),
      serversOnline: so,
      serversSeen: so + 1,
      playersAvg: pa,
      playersPeak: pp,
      playersMin: 0,
      botsAvg: 0,
    });
    const out = rebucketPopulation(
      [q("2026-11-20T00:00:00Z", 10, 100, 150), q("2026-11-21T00:00:00Z", 20, 200, 120)],
      2 * DAY_MS,
      DAY_MS,
    );
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({
      serversOnline: 15,
      playersAvg: 150,
      playersPeak: 150,
      serversSeen: 21,
    });
  });
});
