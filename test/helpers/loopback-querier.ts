import type { Querier } from '../../src/crawler/querier';
import { createA2sQuerier } from '../../src/crawler/queriers/a2s-querier';

/**
 * The real A2S querier, refusing (as a test failure) anything but loopback: nothing else may be sent to.
 * Every target asked for is pushed onto `asked` ("host:port").
 */
export function loopbackOnly(asked: string[]): Querier {
  const real = createA2sQuerier({ timeoutMs: 1000, retries: 1 });
  return {
    query(target, signal) {
      asked.push(`${target.host}:${target.queryPort}`);
      if (!target.host.startsWith('127.')) throw new Error(`the crawler tried to query ${target.host}`);
      return real.query(target, signal);
    },
  };
}
