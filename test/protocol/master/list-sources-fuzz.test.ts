import fc from "fast-check";
import {
  ProtocolError,
  readQueryGameServersReply,
  parseManagementRequest,
  MasterFilter as F,
  type MasterFilterNode,
  formatMasterFilter,
  parseMasterFilter,
  decodeMasterQuery,
  decodeMasterResponse,
} from "../../../src/protocol";

const valueOrProtocolError = (fn: () => unknown): void => {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ProtocolError)) throw err;
  }
};

describe("list sources under arbitrary input", () => {
  it("master packets decode to a value or a ProtocolError", () => {
    const header = Buffer.from("ffffffff660a", "hex");
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.boolean(), (bytes, withHeader) => {
        const packet = withHeader
          ? Buffer.concat([header, Buffer.from(bytes)])
          : Buffer.from(bytes);
        valueOrProtocolError(() => decodeMasterResponse(packet));
        valueOrProtocolError(() => decodeMasterQuery(packet));
      }),
      { numRuns: 2000 },
    );
  });

  it("filter text parses to conditions or a ProtocolError; built filters parse back to themselves", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) =>
        valueOrProtocolError(() => parseMasterFilter(text)),
      ),
      { numRuns: 2000 },
    );
    const word = fc.stringMatching(/^[a-z0-9_]{1,8}$/);
    const leaf: fc.Arbitrary<MasterFilterNode> = fc.oneof(
      word.map(F.map),
      word.map(F.gamedir),
      fc.constant(F.linux()),
      fc.constant(F.notEmpty()),
      fc.nat(9999).map(F.appId),
    );
    const { node } = fc.letrec<{ node: MasterFilterNode }>((tie) => ({
      node: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        leaf,
        fc
          .tuple(
            fc.constantFrom("nor", "nand", "and", "or") as fc.Arbitrary<
              "nor" | "nand" | "and" | "or"
            >,
            fc.array(tie("node"), { minLength: 1, maxLength: 3 }),
          )
          .map(([op, conditions]) => ({ kind: "group" as const, op, conditions })),
      ),
    }));
    fc.assert(
      fc.property(fc.array(node, { maxLength: 4 }), (nodes) =>
        expect(parseMasterFilter(formatMasterFilter(nodes))).toEqual(nodes),
      ),
      { numRuns: 500 },
    );
  });

  it("management lines are requests or refusals, never exceptions", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 100 }),
          fc.json().map(String),
          fc
            .anything()
            .map((v) => JSON.stringify({ command: "msRegisterGameServer", content: v }) ?? ""),
        ),
        (line) => {
          const result = parseManagementRequest(line);
          expect(typeof result.ok).toBe("boolean");
          let parsed: unknown = null;
          try {
            parsed = JSON.parse(line);
          } catch {
            return;
          }
          readQueryGameServersReply(parsed);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
