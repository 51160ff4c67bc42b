/**
 * The Valve A2S querier: INFO, PLAYER and RULES through the protocol library's queryServer, mapped to
 * the normalised ServerStatus by the library's own serverQueryToStatus (the one mapping, shared with the
 * protocol registry). A server that answers INFO is 'answered' (PLAYER / RULES failures only
 * leave those lists empty); one that does not is 'failed' with the INFO error's code.
 */
import { ProtocolError } from '../../protocol/errors';
import type { UdpTransport } from '../../protocol/transport/udp-transport';
import { queryServer, type ServerQueryResult } from '../../protocol/valve/client';
import { serverQueryToStatus } from '../../protocol/valve/server-status';
import type { Querier, QueryOutcome, QueryTarget } from '../querier';

export interface A2sQuerierOptions {
  timeoutMs: number;
  retries: number;
  transport?: UdpTransport;
}

export function createA2sQuerier(options: A2sQuerierOptions): Querier {
  return {
    async query(target: QueryTarget, signal: AbortSignal): Promise<QueryOutcome> {
      if (target.protocol !== 'source') return { kind: 'failed', code: 'NOT_SUPPORTED', message: `no querier for protocol ${target.protocol}` };
      let result: ServerQueryResult;
      try {
        result = await queryServer(
          { host: target.host, port: target.queryPort },
          { timeoutMs: options.timeoutMs, retries: options.retries, signal, ...(options.transport ? { transport: options.transport } : {}) },
        );
      } catch (err) {
        if (err instanceof ProtocolError) return { kind: 'failed', code: err.code, message: err.message };
        throw err;
      }
      const status = serverQueryToStatus(result);
      if (status === null) {
        const error = result.errors.info;
        return { kind: 'failed', code: error?.code ?? 'UNEXPECTED_RESPONSE', ...(error ? { message: error.message } : {}) };
      }
      return { kind: 'answered', status, pingMs: result.pingMs };
    },
  };
}
