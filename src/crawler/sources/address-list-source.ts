/**
 * A fixed list of addresses as a list source (options.addresses: ["1.2.3.4:27015", "quake3 [::1]:27960",
 * { address: "1.2.3.5:22126", protocol: "ase", gamePort: 22003 }], options.file / options.url: text, one
 * entry per line; optionally options.protocol for entries without one): servers added by hand, and older
 * protocols without a master, several protocols in one source. Format: address-list-entries.ts.
 */
import {
  PROTOCOL_IDS,
  type ProtocolId,
  QUAKE3_PROTOCOL_VERSION,
  listQuake3Master,
} from "../../protocol";
import { readFile } from "node:fs/promises";
import type { ListSource, ListedServer, ListingResult, SourceRecord } from "../list-source";
import type { OutboundGuard } from "../outbound-guard";
import {
  isProtocolId,
  parseAddressListEntry,
  parseAddressListText,
  parseHostPort,
} from "./address-list-entries";

/**
 * options.addresses in order: text entries as in a list file, objects { address, protocol?, gamePort? }
 * (the form a JSON config writes naturally); `bad` holds what cannot be read, as written.
 */
function parseAddressOptions(
  entries: readonly unknown[],
  defaultProtocol: ProtocolId,
): { servers: ListedServer[]; bad: string[] } {
  const servers: ListedServer[] = [];
  const bad: string[] = [];
  for (const entry of entries) {
    if (typeof entry === "string") {
      const parsed = parseAddressListText(entry, defaultProtocol);
      servers.push(...parsed.servers);
      bad.push(...parsed.bad);
      continue;
    }
    const server = isRecord(entry) ? addressObjectToServer(entry, defaultProtocol) : null;
    if (server) servers.push(server);
    else bad.push(JSON.stringify(entry) ?? String(entry));
  }
  return { servers, bad };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function addressObjectToServer(
  entry: Record<string, unknown>,
  defaultProtocol: ProtocolId,
): ListedServer | null {
  const { address, protocol, gamePort } = entry;
  if (typeof address !== "string" || /\s/.test(address.trim())) return null;
  if (protocol !== undefined && (typeof protocol !== "string" || !isProtocolId(protocol)))
    return null;
  if (gamePort !== undefined && typeof gamePort !== "number") return null;
  return parseAddressListEntry(
    `${address}${gamePort !== undefined ? ` game=${gamePort}` : ""}`,
    protocol ?? defaultProtocol,
  );
}

/**
 * The list URL and the Quake 3 master are the operator's: their names may be resolved, through `guard` (every
 * address checked against the policy, the connection made to the checked one). Game server names never are.
 */
export function createAddressListSource(
  source: SourceRecord,
  defaults: { guard: OutboundGuard },
): ListSource {
  const o = (source.options ?? {}) as Record<string, unknown>;
  const protocol: ProtocolId =
    typeof o.protocol === "string" && (PROTOCOL_IDS as readonly string[]).includes(o.protocol)
      ? (o.protocol as ProtocolId)
      : "source";
  const addresses: readonly unknown[] = Array.isArray(o.addresses) ? o.addresses : [];
  // options.file / options.url: a list the operator maintains, one `[PROTOCOL] HOST:PORT` per line.
  const file = typeof o.file === "string" ? o.file : null;
  const url = typeof o.url === "string" ? o.url : null;
  // options.quake3Master "HOST:PORT" (+ quake3MasterProtocol, default 68): a Quake 3 master's listing.
  const quake3Master = typeof o.quake3Master === "string" ? parseHostPort(o.quake3Master) : null;
  const quake3Protocol =
    typeof o.quake3MasterProtocol === "number" ? o.quake3MasterProtocol : QUAKE3_PROTOCOL_VERSION;
  return {
    splits: () => [{ region: -1, split: "" }],
    async list(_split, signal): Promise<ListingResult> {
      const texts: string[] = [];
      try {
        if (file !== null) texts.push(await readFile(file, { encoding: "utf8", signal }));
        if (url !== null) {
          const response = await defaults.guard.fetch(url, { signal });
          if (!response.ok)
            throw new Error(
              `HTTP ${response.status}${response.status >= 300 && response.status < 400 ? " (redirects are not followed)" : ""}`,
            );
          texts.push(await response.text());
        }
      } catch (err) {
        // An unreadable list says nothing about which servers are gone: partial, so absences do not count.
        return {
          servers: [],
          partial: true,
          error: `cannot read the address list ${file ?? url}: ${err instanceof Error ? err.message : String(err)}`,
        };
      }
      const { servers, bad } = parseAddressOptions(addresses, protocol);
      const fromText = parseAddressListText(texts.join("\n"), protocol);
      servers.push(...fromText.servers);
      bad.push(...fromText.bad);
      let partial = false;
      if (quake3Master !== null) {
        try {
          const master = await defaults.guard.resolve(quake3Master.host, quake3Master.port);
          const listing = await listQuake3Master(
            { host: master.address, port: quake3Master.port },
            { protocolVersion: quake3Protocol, signal },
          );
          for (const s of listing.servers)
            servers.push({ host: s.host, queryPort: s.port, protocol: "quake3" });
          partial = !listing.complete;
        } catch (err) {
          return {
            servers,
            partial: true,
            error: `Quake 3 master ${o.quake3Master as string}: ${err instanceof Error ? err.message : String(err)}`,
          };
        }
      }
      return {
        servers,
        partial,
        ...(bad.length > 0 ? { error: `unparsable addresses: ${bad.slice(0, 5).join(", ")}` } : {}),
      };
    },
  };
}
