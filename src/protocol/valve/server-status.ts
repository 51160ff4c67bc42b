/**
 * A2S answers (queryServer) → the normalised ServerStatus, so the protocol registry can treat a
 * Source server like any other. Decoded values are taken as they are; only words change.
 */
import type { ServerStatus } from '../status';
import type { ServerQueryResult } from './client';

const OS: Record<string, ServerStatus['os']> = { l: 'linux', w: 'windows', m: 'mac', o: 'mac' };
const SERVER_TYPE: Record<string, 'dedicated' | 'listen' | 'proxy'> = { d: 'dedicated', l: 'listen', p: 'proxy' };

export function serverQueryToStatus(result: ServerQueryResult): ServerStatus {
  const info = result.info?.info;
  const status: ServerStatus = {
    protocol: 'source', name: '', map: '', folder: null, game: null, appId: null, gameId: null, players: 0, maxPlayers: 0, bots: null,
    passwordProtected: null, vacSecured: null, dedicated: null, os: null, version: null, keywords: [], gamePort: null, steamId: null,
    playerList: [], rules: [], raw: null, pingMs: result.pingMs,
  };
  if (info !== undefined) {
    const serverType = info.serverType.toLowerCase();
    Object.assign(status, {
      name: info.name, map: info.map, folder: info.folder, game: info.game, players: info.players, maxPlayers: info.maxPlayers, bots: info.bots,
      passwordProtected: info.visibility === 1, vacSecured: info.vac === 1, dedicated: serverType === 'd',
      os: OS[info.environment.toLowerCase()] ?? null, serverType: SERVER_TYPE[serverType] ?? null,
    });
    if (info.type === 'source') {
      Object.assign(status, {
        appId: info.gameId !== undefined ? Number(BigInt(info.gameId) & 0xffffffn) : info.appId,
        gameId: info.gameId ?? null, version: info.version, gamePort: info.port ?? null, steamId: info.steamId ?? null,
        keywords: info.keywords === undefined ? [] : info.keywords.split(',').filter((k) => k !== ''),
      });
      if (info.tvPort !== undefined) Object.assign(status, { tvPort: info.tvPort, tvName: info.tvName ?? null });
    }
  }
  if (result.players !== null) {
    status.playerList = result.players.players.map((p) => {
      const player: ServerStatus['playerList'][number] = { name: p.name, score: p.score, durationSeconds: p.duration };
      if (p.deaths !== undefined) player.deaths = p.deaths;
      if (p.money !== undefined) player.money = p.money;
      return player;
    });
  }
  if (result.rules !== null) status.rules = result.rules.rules.map((r) => ({ name: r.name, value: r.value }));
  return status;
}
