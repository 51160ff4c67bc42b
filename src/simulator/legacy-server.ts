/**
 * What one simulated server of an older protocol says (Quake 2/3, GameSpy v1/v2/v3, Doom 3,
 * Half-Life WON, ASE), without sockets: request bytes in, datagrams out, built with the protocol
 * library's own response encoders. The same `respond` shape as SimServer, so the fleet runs both.
 * State, players and rules come from the SimServerSpec (players generated from its seed).
 */
import { encodeAseResponse } from '../protocol/legacy/ase';
import { encodeDoom3Response } from '../protocol/legacy/doom3';
import { encodeGamespy1Response } from '../protocol/legacy/gamespy1';
import { encodeGamespy2Response } from '../protocol/legacy/gamespy2';
import { encodeGamespy3ChallengeResponse, encodeGamespy3Response } from '../protocol/legacy/gamespy3';
import { encodeGoldSrcSplit, encodeHalfLifeMessage } from '../protocol/legacy/halflife';
import { encodeQuakeResponse } from '../protocol/legacy/quake3';
import type { KeyValue } from '../protocol/legacy/text';
import type { ProtocolId } from '../protocol/status';
import { playersOf, rulesOf } from './content';
import type { SimReply, SimServerSpec, SimServerStats } from './fleet-spec';
import { hash32, hashString } from './random';

export type LegacySimProtocol = Exclude<ProtocolId, 'source' | 'bomberman'>;

const OOB = Buffer.from([0xff, 0xff, 0xff, 0xff]);
const startsWith = (b: Buffer, prefix: Buffer | string): boolean => {
  const p = typeof prefix === 'string' ? Buffer.from(prefix, 'latin1') : prefix;
  return b.length >= p.length && b.subarray(0, p.length).equals(p);
};
const kv = (key: string, value: string | number | boolean): KeyValue => ({ key, value: typeof value === 'boolean' ? (value ? '1' : '0') : String(value) });
/** Largest GameSpy v1 / v3 datagram the simulator sends: small enough that big player lists split. */
const SIM_DATAGRAM_BYTES = 1200;

export function isLegacySimProtocol(protocol: ProtocolId | undefined): protocol is LegacySimProtocol {
  return protocol !== undefined && protocol !== 'source' && protocol !== 'bomberman';
}

export class LegacySimServer {
  private queryId: number;

  /** `stats` may be shared with the SimServer that delegates here. */
  constructor(
    readonly spec: SimServerSpec,
    readonly protocol: LegacySimProtocol,
    readonly stats: SimServerStats = { requests: 0, garbage: 0, challengesSent: 0, repliesSent: 0, datagramsDropped: 0 },
  ) {
    this.queryId = (hash32(spec.seed ?? 0, 5) % 90) + 1;
  }

  /** GameSpy v3 challenge for one client: stable per client, never 0 (0 means "none"). */
  challengeFor(clientKey: string): number {
    return (hash32(this.spec.seed ?? 0, hashString(clientKey)) % 0x7ffffffe) + 1;
  }

  respond(request: Buffer, clientKey: string): SimReply | null {
    this.stats.requests += 1;
    const datagrams = this.answer(request, clientKey);
    if (datagrams === null) {
      this.stats.garbage += 1;
      return null;
    }
    this.stats.repliesSent += datagrams.length;
    return { datagrams, delayMs: 0 };
  }

  private get players() {
    return playersOf(this.spec).map((p, i) => ({ ...p, pingMs: i >= this.spec.state.players - this.spec.state.bots ? 0 : 20 + ((i * 37) % 180) }));
  }

  private answer(request: Buffer, clientKey: string): Buffer[] | null {
    const s = this.spec.state;
    switch (this.protocol) {
      case 'quake3':
      case 'quake2': {
        const text = startsWith(request, OOB) ? request.subarray(4).toString('latin1').replace(/[\0\n]+$/, '') : '';
        const [command, challenge] = text.split(' ');
        const isQ3 = this.protocol === 'quake3';
        if (isQ3 ? command !== 'getstatus' && command !== 'getinfo' : command !== 'status') return null;
        const info = isQ3
          ? [kv('sv_hostname', s.name), kv('mapname', s.map), kv('sv_maxclients', s.maxPlayers), kv('g_needpass', s.passwordProtected), kv('gamename', s.folder), kv('version', s.version), kv('challenge', challenge ?? '')]
          : [kv('hostname', s.name), kv('mapname', s.map), kv('maxclients', s.maxPlayers), kv('needpass', s.passwordProtected), kv('gamename', s.folder), kv('version', s.version)];
        if (command === 'getinfo') {
          info.push(kv('clients', s.players), kv('g_humanplayers', s.players - s.bots));
          return [encodeQuakeResponse({ header: 'infoResponse', prefixByte: null, info, players: [] })];
        }
        const players = this.players.map((p) => ({ numbers: [p.score, p.pingMs], name: p.name, afterName: '' }));
        return [encodeQuakeResponse({ header: isQ3 ? 'statusResponse' : 'print', prefixByte: null, info, players })];
      }
      case 'gamespy1': {
        if (request[0] !== 0x5c) return null;
        const pairs = [
          kv('gamename', s.folder), kv('gamever', s.version), kv('hostname', s.name), kv('hostport', s.gamePort), kv('mapname', s.map),
          kv('gametype', 'dm'), kv('numplayers', s.players), kv('maxplayers', s.maxPlayers), kv('password', s.passwordProtected),
          ...this.players.flatMap((p, i) => [kv(`player_${i}`, p.name.replace(/\\/g, '/')), kv(`frags_${i}`, p.score), kv(`ping_${i}`, p.pingMs), kv(`team_${i}`, i % 2)]),
          ...rulesOf(this.spec).map((r) => kv(r.name, r.value.replace(/\\/g, '/'))),
        ];
        this.queryId = (this.queryId % 100) + 1;
        return encodeGamespy1Response(pairs, { queryId: this.queryId, maxDatagramBytes: SIM_DATAGRAM_BYTES });
      }
      case 'gamespy2':
      case 'gamespy3':
        return this.answerGamespy(request, clientKey);
      case 'doom3': {
        if (!startsWith(request, Buffer.from([0xff, 0xff])) || request.length < 2 + 8 + 4) return null;
        const command = request.subarray(2, request.indexOf(0, 2)).toString('latin1');
        if (command !== 'getInfo') return null;
        const challenge = request.subarray(request.indexOf(0, 2) + 1, request.indexOf(0, 2) + 5);
        if (challenge.length !== 4) return null;
        return [encodeDoom3Response({
          header: 'infoResponse', challenge, etqwExtra: null, protocolMajor: 1, protocolMinor: 41, sizeField: null,
          info: [kv('si_name', s.name), kv('si_map', s.map), kv('si_maxPlayers', s.maxPlayers), kv('si_usepass', s.passwordProtected), kv('si_version', `DOOM ${s.version}`), kv('gamename', 'baseDOOM-1'), kv('fs_game', '')],
          layout: 'doom3',
          players: this.players.slice(0, 32).map((p, id) => ({ id, pingMs: p.pingMs, rate: 25000, name: p.name, clanTag: null, clanTagPosition: null, isBot: null })),
          osMask: 7, etqw: null, playersEx: null, trailing: Buffer.alloc(0),
        })];
      }
      case 'halflife': {
        if (!startsWith(request, OOB)) return null;
        const command = request.subarray(4).toString('latin1').replace(/\0+$/, '');
        if (command === 'details') {
          return [encodeHalfLifeMessage({
            type: 'm', address: `${this.spec.host}:${s.gamePort}`, hostname: s.name, map: s.map, gamedir: s.folder, description: s.game,
            numPlayers: s.players, maxPlayers: s.maxPlayers, protocol: 46, serverType: s.serverType, os: s.environment === 'w' ? 'w' : 'l',
            passwordProtected: s.passwordProtected, mod: null, secure: s.vacSecured, bots: s.bots, trailing: Buffer.alloc(0),
          })];
        }
        if (command === 'players') {
          return [encodeHalfLifeMessage({ type: 'D', countField: s.players, players: playersOf(this.spec).map((p, i) => ({ index: i + 1, name: p.name, score: p.score, durationSeconds: p.durationSeconds })) })];
        }
        if (command === 'rules') {
          const rules = rulesOf(this.spec);
          const reply = encodeHalfLifeMessage({ type: 'E', countField: rules.length, rules: rules.map((r) => kv(r.name, r.value)) });
          return reply.length <= 1400 ? [reply] : encodeGoldSrcSplit(reply, hash32(this.spec.seed ?? 0, 6) & 0x7fffffff);
        }
        return null;
      }
      case 'ase': {
        if (request.length !== 1 || request[0] !== 0x73) return null;
        return [encodeAseResponse({
          gameName: s.folder, gamePort: String(s.gamePort), hostname: s.name, gameType: 'DM', map: s.map, version: s.version,
          password: s.passwordProtected ? '1' : '0', numPlayers: String(s.players), maxPlayers: String(s.maxPlayers),
          rules: rulesOf(this.spec).map((r) => kv(r.name, r.value.slice(0, 200))),
          players: this.players.map((p) => ({ flags: 0x19, name: p.name, score: String(p.score), ping: String(p.pingMs) })),
        })];
      }
    }
  }

  private answerGamespy(request: Buffer, clientKey: string): Buffer[] | null {
    if (request.length < 7 || request[0] !== 0xfe || request[1] !== 0xfd) return null;
    const s = this.spec.state;
    const requestId = Buffer.from(request.subarray(3, 7));
    const server = [
      kv('hostname', s.name), kv('gamename', s.folder), kv('gamever', s.version), kv('hostport', s.gamePort), kv('mapname', s.map), kv('gametype', 'dm'),
      kv('numplayers', s.players), kv('maxplayers', s.maxPlayers), kv('password', s.passwordProtected),
      ...rulesOf(this.spec).map((r) => kv(r.name, r.value)),
    ];
    const players = this.players;
    if (this.protocol === 'gamespy3') {
      if (request[2] === 0x09) {
        this.stats.challengesSent += 1;
        return [encodeGamespy3ChallengeResponse(requestId, this.challengeFor(clientKey))];
      }
      if (request[2] !== 0x00 || request.length !== 15) return null; // id, challenge, FF FF FF 01
      if (request.readInt32BE(7) !== this.challengeFor(clientKey)) return null; // a stale or missing challenge: silence
      return encodeGamespy3Response({
        requestId,
        server,
        players: { fields: ['player_', 'score_', 'ping_', 'team_'], rows: players.map((p, i) => ({ player_: p.name, score_: String(p.score), ping_: String(p.pingMs), team_: String((i % 2) + 1) })) },
        teams: { fields: ['team_t', 'score_t'], rows: [{ team_t: 'Red', score_t: '0' }, { team_t: 'Blue', score_t: '0' }] },
      }, { maxDatagramBytes: SIM_DATAGRAM_BYTES });
    }
    if (request[2] !== 0x00 || request.length < 10) return null;
    const [sv, pl, tm] = [request[7] !== 0, request[8] !== 0, request[9] !== 0];
    return [encodeGamespy2Response({
      requestId,
      server: sv ? server : null,
      players: pl ? { countField: players.length, fields: ['player_', 'score_', 'ping_', 'team_'], rows: players.map((p, i) => [p.name, String(p.score), String(p.pingMs), String(i % 2)]) } : null,
      teams: tm ? { countField: 2, fields: ['team_t', 'score_t'], rows: [['Red', '0'], ['Blue', '0']] } : null,
      trailingBytes: 0,
    })];
  }
}
