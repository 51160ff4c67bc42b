/**
 * The crawler's querier for every protocol, Valve A2S included: each target goes to its protocol's
 * adapter in the protocol registry and ends in the normalised ServerStatus. A server that answers is
 * 'answered' (an A2S server that answers INFO is, whatever PLAYER and RULES do); one that does not is
 * 'failed' with the ProtocolError's code. A protocol that is never queried ('bomberman': its state is
 * what the server reports) is a NOT_SUPPORTED outcome. Every query goes through one transport (the
 * one given, else the process-wide one), so a worker keeps one socket for all its queries.
 */
import {
  ProtocolError,
  isQueryableProtocol,
  protocolAdapter,
  type UdpTransport,
} from "../../protocol";
import type { Querier, QueryOutcome, QueryTarget } from "../querier";

export interface ProtocolQuerierOptions {
  timeoutMs: number;
  retries: number;
  transport?: UdpTransport;
}

export function createProtocolQuerier(options: ProtocolQuerierOptions): Querier {
  return {
    async query(target: QueryTarget, signal: AbortSignal): Promise<QueryOutcome> {
      if (!isQueryableProtocol(target.protocol))
        return {
          kind: "failed",
          code: "NOT_SUPPORTED",
          message: `protocol ${target.protocol} is not queried`,
        };
      try {
        const status = await protocolAdapter(target.protocol).queryStatus(
          { host: target.host, port: target.queryPort },
          {
            timeoutMs: options.timeoutMs,
            retries: options.retries,
            signal,
            ...(options.transport ? { transport: options.transport } : {}),
          },
        );
        return { kind: "answered", status, pingMs: status.pingMs };
      } catch (err) {
        if (err instanceof ProtocolError)
          return { kind: "failed", code: err.code, message: err.message };
        throw err;
      }
    },
  };
}
