import {
  MAX_SHARED_NAMES_SKIPS,
  type SharedNamesRecord,
  skipSharedNames,
} from "../../src/crawler/store/shared-names";

const over = (pool = 100_000): SharedNamesRecord => ({ result: "over budget", pool });
const skipped = (pool = 100_000): SharedNamesRecord => ({ result: "skipped", pool });
const checked = (pool = 100_000): SharedNamesRecord => ({ result: "checked", pool });

describe("skipSharedNames: backing off after the rule ran over its budget", () => {
  it("runs the rule when nothing went over budget", () => {
    expect(skipSharedNames([], 100_000)).toBe(false);
    expect(skipSharedNames([checked()], 100_000)).toBe(false);
    expect(skipSharedNames([{ result: "failed", pool: 100_000 }], 100_000)).toBe(false);
  });

  it("skips 2^n - 1 closes after n over-budget runs in a row, skips between them not breaking the row", () => {
    expect(skipSharedNames([over()], 100_000)).toBe(true);
    expect(skipSharedNames([skipped(), over()], 100_000)).toBe(false);
    const two = [over(), skipped(), over()];
    expect(skipSharedNames(two, 100_000)).toBe(true);
    expect(skipSharedNames([skipped(), skipped(), ...two], 100_000)).toBe(true);
    expect(skipSharedNames([skipped(), skipped(), skipped(), ...two], 100_000)).toBe(false);
    // A run that fitted its budget ends the row.
    expect(skipSharedNames([over(), checked(), over()], 100_000)).toBe(true);
    expect(skipSharedNames([skipped(), over(), checked(), over()], 100_000)).toBe(false);
  });

  it("never skips more than MAX_SHARED_NAMES_SKIPS closes in a row", () => {
    const many = Array.from({ length: 40 }, () => over());
    const skips = (n: number): SharedNamesRecord[] => Array.from({ length: n }, () => skipped());
    expect(skipSharedNames([...skips(MAX_SHARED_NAMES_SKIPS - 1), ...many], 100_000)).toBe(true);
    expect(skipSharedNames([...skips(MAX_SHARED_NAMES_SKIPS), ...many], 100_000)).toBe(false);
  });

  it("tries again at once when the pool shrank well below the one that ran over budget", () => {
    expect(skipSharedNames([over(100_000)], 95_000)).toBe(true);
    expect(skipSharedNames([over(100_000)], 80_000)).toBe(false);
  });
});
