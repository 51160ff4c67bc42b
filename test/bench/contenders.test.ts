import { makeContender } from "../../bench/query/contenders";
import { ProtocolError } from "../../src/protocol";

// The crawl part's bare-library passes count answers with failed() instead of keeping them for answer():
// the two must agree on which servers failed, or the column's "answered" would change meaning.
describe("the gsindex contender's failed()", () => {
  const contender = makeContender("gsindex", { sendWaitMs: 500, sends: 2 });
  afterAll(() => contender.close());

  const info = {
    info: {
      type: "source",
      name: "n",
      map: "m",
      folder: "f",
      game: "g",
      players: 1,
      maxPlayers: 8,
    },
    pingMs: 3,
  };
  const whole = { info, players: { count: 0, players: [] }, rules: { count: 0, rules: [] } };
  const timeout = new ProtocolError("TIMEOUT", "no answer");

  it.each([
    ["a whole answer", false, { ...whole, pingMs: 3, errors: {} }],
    ["a thrown error", true, { error: "boom" }],
    ["no INFO", true, { ...whole, info: null, pingMs: null, errors: { info: timeout } }],
    ["no PLAYER", true, { ...whole, players: null, pingMs: 3, errors: { players: timeout } }],
    ["no RULES", true, { ...whole, rules: null, pingMs: 3, errors: { rules: timeout } }],
  ])("%s: failed() is %s, as answer()'s error says", (_what, failed, raw) => {
    expect(contender.failed(raw)).toBe(failed);
    expect(contender.answer(raw).error !== undefined).toBe(failed);
  });
});
