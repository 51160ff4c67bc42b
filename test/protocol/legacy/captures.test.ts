import { describeWithShared } from "../../helpers/shared-dir";
import { loadLegacyCaptures } from "./capture-files";
import { decodeToExpectedShape } from "./to-expected";

describeWithShared("legacy captures decode to their expected values", (sharedDir) => {
  const captures = loadLegacyCaptures(sharedDir);

  it("finds captures", () => {
    expect(captures.length).toBeGreaterThan(0);
  });

  describe.each(captures.map((c) => [c.file, c] as const))("%s", (_file, capture) => {
    it("decodes every expected field", () => {
      const actual = decodeToExpectedShape(capture);
      if (actual === null) throw new Error(`no decoder for protocol ${capture.protocol}`);
      const { summary: _summary, ...expected } = capture.expected;
      expect(actual).toEqual(expected);
    });
  });
});
