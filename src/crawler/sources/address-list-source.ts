/**
 * A fixed list of addresses as a list source (options.addresses: ["1.2.3.4:27015", "[::1]:27015"],
 * optionally options.protocol): servers added by hand, and older protocols without a master.
 */
import { PROTOCOL_IDS, type ProtocolId } from '../../protocol/status';
import type { ListSource, ListedServer, ListingResult, SourceRecord } from '../list-source';

export function parseHostPort(text: string): { host: string; port: number } | null {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(text) ?? /^([^:]+):(\d{1,5})$/.exec(text);
  if (!m) return null;
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { host: m[1] as string, port } : null;
}

export function createAddressListSource(source: SourceRecord): ListSource {
  const o = (source.options ?? {}) as Record<string, unknown>;
  const protocol: ProtocolId = typeof o.protocol === 'string' && (PROTOCOL_IDS as readonly string[]).includes(o.protocol) ? (o.protocol as ProtocolId) : 'source';
  const addresses = Array.isArray(o.addresses) ? o.addresses.filter((a): a is string => typeof a === 'string') : [];
  return {
    splits: () => [{ region: -1, split: '' }],
    list(): Promise<ListingResult> {
      const servers: ListedServer[] = [];
      const bad: string[] = [];
      for (const text of addresses) {
        const hp = parseHostPort(text.trim());
        if (hp) servers.push({ host: hp.host, queryPort: hp.port, protocol });
        else bad.push(text);
      }
      return Promise.resolve({ servers, partial: false, ...(bad.length > 0 ? { error: `unparsable addresses: ${bad.slice(0, 5).join(', ')}` } : {}) });
    },
  };
}
