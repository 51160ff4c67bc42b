import type { Querier } from "../../src/crawler/querier";
import { createProtocolQuerier } from "../../src/crawler/queriers/protocol-querier";

/**
 * The real querier, refusing (as a test failure) anything but loopback: nothing else may be sent to.
 * Every target asked for is pushed onto `asked` ("host:port").
 */
export function loopbackOnly(asked: string[]): Querier {
  const real = createProtocolQuerier({ timeoutMs: 1000, retries: 1 });
  return {
    query(target, signal) {
      asked.push(`${target.host}:${target.queryPort}`);
      if (!target.host.startsWith("127."))
        throw new Error(`the crawler tried to query ${target.host}`);
      return real.query(target, signal);
    },
  };
}
