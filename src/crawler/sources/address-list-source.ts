/**
 * A fixed list of addresses as a list source (options.addresses: ["1.2.3.4:27015", "quake3 [::1]:27960"],
 * options.file / options.url: the same, one per line; optionally options.protocol for entries without
 * one): servers added by hand, and older protocols without a master. Format: address-list-entries.ts.
 */
import { PROTOCOL_IDS, type ProtocolId } from '../../protocol/status';
import { readFile } from 'node:fs/promises';
import type { ListSource, ListingResult, SourceRecord } from '../list-source';
import { parseAddressListText } from './address-list-entries';

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
  // options.file / options.url: a list the operator maintains, one `[PROTOCOL] HOST:PORT` per line.
  const file = typeof o.file === 'string' ? o.file : null;
  const url = typeof o.url === 'string' ? o.url : null;
  return {
    splits: () => [{ region: -1, split: '' }],
    async list(_split, signal): Promise<ListingResult> {
      const texts = [addresses.join('\n')];
      try {
        if (file !== null) texts.push(await readFile(file, { encoding: 'utf8', signal }));
        if (url !== null) {
          const response = await fetch(url, { signal });
          if (!response.ok) throw new Error(`HTTP ${response.status}`);
          texts.push(await response.text());
        }
      } catch (err) {
        // An unreadable list says nothing about which servers are gone: partial, so absences do not count.
        return { servers: [], partial: true, error: `cannot read the address list ${file ?? url}: ${err instanceof Error ? err.message : String(err)}` };
      }
      const { servers, bad } = parseAddressListText(texts.join('\n'), protocol);
      return { servers, partial: false, ...(bad.length > 0 ? { error: `unparsable addresses: ${bad.slice(0, 5).join(', ')}` } : {}) };
    },
  };
}
