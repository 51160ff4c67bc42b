/** What the older protocols' server sides (each module's `answer`) share. */
import type { ServedState } from "../adapter";
import type { KeyValue } from "./text";

export const OOB = Buffer.from([0xff, 0xff, 0xff, 0xff]);

export const startsWith = (b: Buffer, prefix: Buffer | string): boolean => {
  const p = typeof prefix === "string" ? Buffer.from(prefix, "latin1") : prefix;
  return b.length >= p.length && b.subarray(0, p.length).equals(p);
};

export const kv = (key: string, value: string | number | boolean): KeyValue => ({
  key,
  value: typeof value === "boolean" ? (value ? "1" : "0") : String(value),
});

/** The server keys GameSpy v2 and v3 servers send. */
export function gamespyServerPairs(s: ServedState): KeyValue[] {
  return [
    kv("hostname", s.name),
    kv("gamename", s.folder),
    kv("gamever", s.version),
    kv("hostport", s.gamePort),
    kv("mapname", s.map),
    kv("gametype", "dm"),
    kv("numplayers", s.players),
    kv("maxplayers", s.maxPlayers),
    kv("password", s.passwordProtected),
    ...s.rules.map((r) => kv(r.name, r.value)),
  ];
}
