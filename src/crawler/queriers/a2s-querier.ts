/**
 * The Valve A2S querier: INFO, PLAYER and RULES through the protocol library's queryServer, mapped to
 * the normalised ServerStatus. A server that answers INFO is 'answered' (PLAYER / RULES failures only
 * leave those lists empty); one that does not is 'failed' with the INFO error's code.
 */
import { ProtocolError } from '../../protocol/errors';
import type { ServerStatus } from '../../protocol/status';
import type { UdpTransport } from '../../protocol/transport/udp-transport';
import { queryServer, type ServerQueryResult } from '../../protocol/valve/client';
import type { Querier, QueryOutcome, QueryTarget } from '../querier';

const OS: Record<string, ServerStatus['os']> = { l: 'linux', w: 'windows', m: 'mac', o: 'mac' };
const SERVER_TYPE: Record<string, ServerStatus['serverType']> = { d: 'dedicated', l: 'listen', p: 'proxy' };

/** The low 24 bits of the 64-bit game id are the app id (the 16-bit field is 0 for many games). */
function appIdOf(appId: number | undefined, gameId: string | undefined): number | null {
  if (gameId !== undefined && /^\d+$/.test(gameId)) {
    const fromGameId = Number(BigInt(gameId) & 0xffffffn);
    if (fromGameId > 0) return fromGameId;
  }
  return appId === undefined ? null : appId;
}

export function a2sResultToStatus(result: ServerQueryResult): ServerStatus | null {
  if (result.info === null) return null;
  const info = result.info.info;
  const source = info.type === 'source' ? info : null;
  const serverType = info.serverType.toLowerCase();
  return {
    protocol: 'source',
    name: info.name,
    map: info.map,
    folder: info.folder,
    game: info.game,
    appId: source ? appIdOf(source.appId, source.gameId) : null,
    gameId: source?.gameId ?? null,
    players: info.players,
    maxPlayers: info.maxPlayers,
    bots: info.bots,
    passwordProtected: info.visibility === 1,
    vacSecured: info.vac === 1,
    dedicated: serverType === 'd' ? true : serverType === 'l' ? false : null,
    os: OS[info.environment.toLowerCase()] ?? null,
    version: source?.version ?? null,
    keywords: (source?.keywords ?? '').split(',').map((k) => k.trim()).filter((k) => k !== ''),
    gamePort: source?.port ?? null,
    steamId: source?.steamId ?? null,
    playerList: (result.players?.players ?? []).map((p) => ({
      name: p.name,
      score: p.score,
      durationSeconds: p.duration,
      ...(p.deaths !== undefined ? { deaths: p.deaths } : {}),
      ...(p.money !== undefined ? { money: p.money } : {}),
    })),
    rules: (result.rules?.rules ?? []).map((r) => ({ name: r.name, value: r.value })),
    raw: null,
    pingMs: result.pingMs,
    serverType: SERVER_TYPE[serverType] ?? null,
    tvPort: source?.tvPort ?? null,
    tvName: source?.tvName ?? null,
  };
}

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
      const status = a2sResultToStatus(result);
      if (status === null) {
        const error = result.errors.info;
        return { kind: 'failed', code: error?.code ?? 'UNEXPECTED_RESPONSE', ...(error ? { message: error.message } : {}) };
      }
      return { kind: 'answered', status, pingMs: result.pingMs };
    },
  };
}
