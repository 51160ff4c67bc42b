/**
 * ProtocolId → how to query a game server of that protocol: its default query port (a function of
 * the game port) and a query that ends in the normalised ServerStatus. The crawler and the CLI go
 * through this table, so every protocol is treated alike.
 */
import { ProtocolError } from './errors';
import { QUERY_PORT_OFFSET } from './legacy/quirks';
import type { LegacyProtocol } from './legacy/quirks';
import { queryAse, queryDoom3, queryGamespy1, queryGamespy2, queryGamespy3, queryHalfLife, queryQuake2, queryQuake3 } from './legacy/client';
import type { LegacyQueryOptions } from './legacy/client';
import { aseToStatus, doom3ToStatus, gamespy1ToStatus, gamespy2ToStatus, gamespy3ToStatus, halfLifeToStatus, jc2mpToStatus, quakeToStatus } from './legacy/to-status';
import type { ProtocolId, ServerStatus } from './status';
import type { ServerAddress } from './types';
import { queryServer } from './valve/client';
import { serverQueryToStatus } from './valve/server-status';

export type RegistryQueryOptions = LegacyQueryOptions;

export interface ProtocolAdapter {
  id: ProtocolId;
  /** The port queries go to when only the game port is known. */
  defaultQueryPort(gamePort: number): number;
  /** Query one game server; failures are ProtocolErrors (TIMEOUT for a silent server). */
  queryStatus(address: ServerAddress, options?: RegistryQueryOptions): Promise<ServerStatus>;
}

function legacy(id: LegacyProtocol, query: (address: ServerAddress, options: RegistryQueryOptions) => Promise<ServerStatus>): ProtocolAdapter {
  return {
    id,
    defaultQueryPort: (gamePort) => gamePort + QUERY_PORT_OFFSET[id],
    queryStatus: (address, options = {}) => query(address, options),
  };
}

const withPing = (status: ServerStatus, pingMs: number | null, partial: boolean): ServerStatus => ({ ...status, pingMs, ...(partial ? { partial: true } : {}) });

export type QueryableProtocolId = Exclude<ProtocolId, 'bomberman'>;

export const PROTOCOL_REGISTRY: Readonly<Record<QueryableProtocolId, ProtocolAdapter>> = {
  source: {
    id: 'source',
    defaultQueryPort: (gamePort) => gamePort,
    queryStatus: async (address, options = {}) => {
      const result = await queryServer(address, options);
      const status = serverQueryToStatus(result);
      if (status === null) throw result.errors.info ?? new ProtocolError('TIMEOUT', 'no A2S_INFO answer');
      return status;
    },
  },
  quake2: legacy('quake2', async (a, o) => {
    const r = await queryQuake2(a, o);
    return withPing(quakeToStatus(r.reply, 'quake2'), r.pingMs, r.partial);
  }),
  quake3: legacy('quake3', async (a, o) => {
    const r = await queryQuake3(a, o);
    return withPing(quakeToStatus(r.reply, 'quake3'), r.pingMs, r.partial);
  }),
  gamespy1: legacy('gamespy1', async (a, o) => {
    const r = await queryGamespy1(a, o);
    return withPing(gamespy1ToStatus(r.reply), r.pingMs, r.partial);
  }),
  gamespy2: legacy('gamespy2', async (a, o) => {
    const r = await queryGamespy2(a, o);
    return withPing(gamespy2ToStatus([r.reply]), r.pingMs, r.partial);
  }),
  gamespy3: legacy('gamespy3', async (a, o) => {
    const r = await queryGamespy3(a, o);
    const reply = r.reply;
    const status = reply.kind === 'split' ? gamespy3ToStatus(reply.response) : reply.kind === 'jc2mp' ? jc2mpToStatus(reply.response) : { ...gamespy2ToStatus([reply.response]), protocol: 'gamespy3' as const };
    return withPing(status, r.pingMs, r.partial);
  }),
  doom3: legacy('doom3', async (a, o) => {
    const r = await queryDoom3(a, o);
    return withPing(doom3ToStatus(r.reply), r.pingMs, r.partial);
  }),
  halflife: legacy('halflife', async (a, o) => {
    const r = await queryHalfLife(a, o);
    return withPing(halfLifeToStatus(r.messages), r.pingMs, false);
  }),
  ase: legacy('ase', async (a, o) => {
    const r = await queryAse(a, o);
    return withPing(aseToStatus(r.reply), r.pingMs, r.partial);
  }),
};

export function isQueryableProtocol(id: string): id is QueryableProtocolId {
  return Object.prototype.hasOwnProperty.call(PROTOCOL_REGISTRY, id);
}

/** The adapter of a protocol; NOT_SUPPORTED for protocols that are never queried ('bomberman'). */
export function protocolAdapter(id: ProtocolId | string): ProtocolAdapter {
  if (!isQueryableProtocol(id)) throw new ProtocolError('NOT_SUPPORTED', `protocol '${id}' is not queried`);
  return PROTOCOL_REGISTRY[id];
}
