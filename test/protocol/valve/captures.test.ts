/**
 * Every real capture in ../shared/captures/a2s decodes to its expected values (malformed ones and
 * the missing-fragment variant fail with a ProtocolError). Data-driven: one test per file; skipped
 * with a message where ../shared is absent. The capture bytes are read at test time, never copied.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { decodeDatagrams, ProtocolError, type A2SResponse } from "../../../src/protocol";
import { describeWithShared } from "../../helpers/shared-dir";

interface Capture {
  id: string;
  kind: "info" | "players" | "rules" | "challenge" | "ping" | "malformed";
  context?: { appId?: number };
  packets_hex: string[];
  expected: Record<string, unknown>;
}

/** Our value in the captures' `expected` shape (their README's schema). */
function toCaptureShape(response: A2SResponse): Record<string, unknown> {
  switch (response.kind) {
    case "info": {
      const { theShip, ...rest } = response.value as typeof response.value & { theShip?: unknown };
      return theShip === undefined ? { ...rest } : { ...rest, ship: theShip };
    }
    case "players": {
      const v = response.value;
      return v.truncated
        ? { count: v.count, players: v.players, truncated: true, playersPresent: v.players.length }
        : { count: v.count, players: v.players };
    }
    case "rules": {
      const v = response.value;
      const out: Record<string, unknown> = {
        count: v.count,
        rules: v.rules.map((r) => [r.name, r.value]),
      };
      if (v.rules.some((r) => r.nameHex !== undefined || r.valueHex !== undefined)) {
        out.rulesHex = v.rules.map((r) => [
          r.nameHex ?? Buffer.from(r.name, "utf8").toString("hex"),
          r.valueHex ?? Buffer.from(r.value, "utf8").toString("hex"),
        ]);
      }
      if (v.truncated) Object.assign(out, { truncated: true, rulesPresent: v.rules.length });
      return out;
    }
    case "challenge":
      return { ...response.value };
    case "ping":
      return { ack: true };
  }
}

describeWithShared("real A2S captures (../shared/captures/a2s)", (shared) => {
  const dir = path.join(shared, "captures", "a2s");
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort();

  it("finds the captures", () => {
    expect(files.length).toBeGreaterThan(300);
  });

  it.each(files)("%s", (file) => {
    const capture = JSON.parse(readFileSync(path.join(dir, file), "utf8")) as Capture;
    const datagrams = capture.packets_hex.map((hex) => Buffer.from(hex, "hex"));
    const context = capture.context?.appId === undefined ? {} : { appId: capture.context.appId };
    if (capture.kind === "malformed") {
      expect(() => decodeDatagrams(datagrams, context)).toThrow(ProtocolError);
      return;
    }
    const response = decodeDatagrams(datagrams, context);
    expect(response.kind).toBe(capture.kind);
    expect(toCaptureShape(response)).toEqual(capture.expected);
  });
});
