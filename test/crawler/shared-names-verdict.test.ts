import {
  type NamePoolServer,
  SharedNamesDeadlineError,
  sharedNamesVerdicts,
} from "../../src/crawler/store/shared-names-verdict";

const rules = { sharedNameServers: 3, sharedNamesPerServer: 5 };

/** The rule as docs/fake-players.md words it, pair by pair over name sets. */
function byDefinition(
  pool: NamePoolServer[],
  r: { sharedNameServers: number; sharedNamesPerServer: number },
): boolean[] {
  return pool.map((a, i) => {
    const mine = new Set(a.usable);
    let others = 0;
    pool.forEach((b, j) => {
      if (j === i) return;
      const k = b.usable.filter((n) => mine.has(n)).length;
      if (k > 0 && k - a.bots >= r.sharedNamesPerServer && 2 * k >= a.names) others++;
    });
    return others >= r.sharedNameServers - 1;
  });
}

const server = (usable: number[], extra = 0, bots = 0): NamePoolServer => ({
  bots,
  names: usable.length + extra,
  usable,
});

describe("sharedNamesVerdicts: the shared-names rule over integer name ids", () => {
  it("flags three servers handed one name list, and not a server that shares a few of them", () => {
    const farm = [1, 2, 3, 4, 5, 6, 7, 8];
    const pool = [server(farm), server(farm), server(farm), server([1, 2, 3, 20, 21, 22], 10)];
    expect(sharedNamesVerdicts(pool, rules)).toEqual([true, true, true, false]);
  });

  it("needs half of a server's names, its unusable ones counted, and N beyond the bots it reports", () => {
    const names = [1, 2, 3, 4, 5, 6];
    // 6 shared of 13 names: not half.
    expect(sharedNamesVerdicts([server(names, 7), server(names), server(names)], rules)[0]).toBe(
      false,
    );
    // 6 shared, 2 bots reported: 4 beyond them, under N = 5.
    expect(sharedNamesVerdicts([server(names, 0, 2), server(names), server(names)], rules)[0]).toBe(
      false,
    );
    expect(sharedNamesVerdicts([server(names, 0, 1), server(names), server(names)], rules)[0]).toBe(
      true,
    );
  });

  it("needs sharedNameServers - 1 other servers", () => {
    const names = [1, 2, 3, 4, 5];
    expect(sharedNamesVerdicts([server(names), server(names)], rules)).toEqual([false, false]);
    expect(
      sharedNamesVerdicts([server(names), server(names)], { ...rules, sharedNameServers: 2 }),
    ).toEqual([true, true]);
  });

  it("agrees with the rule's definition on random pools and thresholds", () => {
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const vocabulary = 5 + next(40);
      const pool = Array.from({ length: 2 + next(40) }, () => {
        const usable = [...new Set(Array.from({ length: next(16) }, () => next(vocabulary)))];
        return server(usable, next(4), next(3));
      });
      const r = { sharedNameServers: 2 + next(3), sharedNamesPerServer: 1 + next(5) };
      expect(sharedNamesVerdicts(pool, r)).toEqual(byDefinition(pool, r));
    }
  });

  it("gives up past its deadline with a typed error", () => {
    const pool = [server([1, 2, 3, 4, 5]), server([1, 2, 3, 4, 5])];
    let clock = 0;
    const now = (): number => (clock += 10);
    expect(() => sharedNamesVerdicts(pool, rules, 5, now)).toThrow(SharedNamesDeadlineError);
    expect(sharedNamesVerdicts(pool, rules, Infinity, now)).toEqual([false, false]);
  });
});
