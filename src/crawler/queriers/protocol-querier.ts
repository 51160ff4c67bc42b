/**
 * The crawler's querier for every protocol: Source servers go to the A2S querier (INFO, PLAYER,
 * RULES with its own outcome rules); every other queryable protocol goes through the protocol
 * registry and ends in the same normalised ServerStatus. A protocol that is never queried
 * ('bomberman': its state is what the server reports) is a NOT_SUPPORTED outcome.
 */
import { ProtocolError } from '../../protocol/errors';
import { isQueryableProtocol, protocolAdapter } from '../../protocol/registry';
import type { UdpTransport } from '../../protocol/transport/udp-transport';
import type { Querier, QueryOutcome, QueryTarget } from '../querier';

export interface ProtocolQuerierOptions {
  timeoutMs: number;
  retries: number;
  transport?: UdpTransport;
}

export function createProtocolQuerier(options: ProtocolQuerierOptions, source: Querier): Querier {
  return {
    async query(target: QueryTarget, signal: AbortSignal): Promise<QueryOutcome> {
      if (target.protocol === 'source') return source.query(target, signal);
      if (!isQueryableProtocol(target.protocol)) return { kind: 'failed', code: 'NOT_SUPPORTED', message: `protocol ${target.protocol} is not queried` };
      try {
        const status = await protocolAdapter(target.protocol).queryStatus(
          { host: target.host, port: target.queryPort },
          { timeoutMs: options.timeoutMs, retries: options.retries, signal, ...(options.transport ? { transport: options.transport } : {}) },
        );
        return { kind: 'answered', status, pingMs: status.pingMs };
      } catch (err) {
        if (err instanceof ProtocolError) return { kind: 'failed', code: err.code, message: err.message };
        throw err;
      }
    },
  };
}
