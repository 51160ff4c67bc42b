/**
 * Maps our typed decoder results to the shape of the captures' `expected` blocks (README of
 * ../shared/captures/legacy), so the data-driven test compares like with like.
 */
import { decodeAseResponse } from "../../../src/protocol/legacy/ase";
import { decodeDoom3Response } from "../../../src/protocol/legacy/doom3";
import { decodeGamespy1Response, groupGamespy1Pairs } from "../../../src/protocol/legacy/gamespy1";
import { decodeGamespy2Response, tableToObjects } from "../../../src/protocol/legacy/gamespy2";
import { decodeGamespy3Response, decodeJc2mpResponse } from "../../../src/protocol/legacy/gamespy3";
import { decodeHalfLifeDatagrams } from "../../../src/protocol/legacy/halflife";
import type { HalfLifeMessage } from "../../../src/protocol/legacy/halflife";
import { decodeQuakeResponse } from "../../../src/protocol/legacy/quake3";
import { toRecord } from "../../../src/protocol/legacy/text";
import type { LegacyCapture } from "./capture-files";
import { packetsOf } from "./capture-files";

type Json = Record<string, unknown>;

function quake(c: LegacyCapture): Json {
  const [packet] = packetsOf(c);
  const d = decodeQuakeResponse(packet!);
  return {
    header: d.header,
    info: toRecord(d.info),
    players: d.players.map((p) => {
      const out: Json = { score: p.numbers[0], ping: p.numbers[1] };
      if (p.numbers.length > 2) out.extra_numbers = p.numbers.slice(2);
      out.name = p.name;
      if (p.afterName !== "") out.after_name = p.afterName;
      return out;
    }),
  };
}

function gamespy1(c: LegacyCapture): Json {
  const d = decodeGamespy1Response(packetsOf(c));
  const g = groupGamespy1Pairs(d.pairs);
  return {
    packet_order: d.datagrams.map((x) => ({ queryid: x.queryIdText, final: x.isFinal })),
    info: g.info,
    players: g.players.map((p) => ({ index: p.index, ...p.fields })),
    teams: g.teams,
  };
}

function gamespy2(c: LegacyCapture): Json {
  const requests = c.request_hex.map((h) => Buffer.from(h, "hex"));
  const responses = packetsOf(c).map((packet) => {
    const id = packet.subarray(1, 5);
    const request = requests.find((q) => q.subarray(3, 7).equals(id))!;
    const sections = {
      server: request[7] !== 0,
      players: request[8] !== 0,
      teams: request[9] !== 0,
    };
    const d = decodeGamespy2Response(packet, sections);
    const out: Json = {
      request_id_hex: id.toString("hex"),
      sections_requested: sections.server ? "server" : "players+teams",
    };
    if (d.server !== null) out.info = toRecord(d.server);
    if (d.players !== null) {
      out.player_count_field = d.players.countField;
      out.player_fields = d.players.fields;
      out.players = tableToObjects(d.players);
    }
    if (d.teams !== null) {
      out.team_count_field = d.teams.countField;
      out.team_fields = d.teams.fields;
      out.teams = tableToObjects(d.teams);
    }
    return out;
  });
  return { responses };
}

function gamespy3(c: LegacyCapture): Json {
  const d = decodeGamespy3Response(packetsOf(c));
  return {
    info: toRecord(d.server),
    players: d.players.rows,
    teams: d.teams.rows,
    player_fields: d.players.fields,
    team_fields: d.teams.fields,
    packet_numbers: d.datagrams,
  };
}

function jc2mp(c: LegacyCapture): Json {
  const [packet] = packetsOf(c);
  const d = decodeJc2mpResponse(packet!);
  return {
    info: { ...toRecord(d.server), __jc2mp_player_count_field__: String(d.playerCountField) },
    players: d.players.map((p) => ({ name: p.name, steamid: p.steamId, ping: p.pingMs })),
    teams: [],
    player_fields: [],
    team_fields: [],
    packet_numbers: [[packet![14]! & 0x7f, (packet![14]! & 0x80) !== 0]],
  };
}

/** Python's round(x, 3) (half to even on the exact binary value), which produced `expected`. */
function round3(n: number): number {
  const scaled = n * 1000;
  const floor = Math.floor(scaled);
  const diff = scaled - floor;
  const rounded = diff > 0.5 ? floor + 1 : diff < 0.5 ? floor : floor % 2 === 0 ? floor : floor + 1;
  return rounded / 1000;
}

function doom3(c: LegacyCapture): Json {
  const [packet] = packetsOf(c);
  const d = decodeDoom3Response(packet!);
  const out: Json = {
    header: d.header,
    challenge_hex: d.challenge.toString("hex"),
    protocol: `${d.protocolMajor}.${d.protocolMinor}`,
    protocol_raw: d.protocolMajor * 65536 + d.protocolMinor,
    info: toRecord(d.info),
    players: d.players.map((p) => {
      const o: Json = { id: p.id, ping: p.pingMs };
      if (p.rate !== null) o.rate = p.rate;
      o.name = p.name;
      if (p.clanTagPosition !== null) o.clantag_pos = p.clanTagPosition;
      if (p.clanTag !== null) o.clantag = p.clanTag;
      if (p.isBot !== null) o.typeflag = p.isBot ? 1 : 0;
      return o;
    }),
    osmask: d.osMask,
    trailing_hex: d.trailing.toString("hex"),
  };
  if (d.etqwExtra !== null) out.etqw_extra_hex = d.etqwExtra.toString(16).padStart(8, "0");
  if (d.sizeField !== null) {
    out.size_field = d.sizeField;
    out.size_field_matches_remaining = true;
  }
  if (d.etqw !== null) {
    Object.assign(out, {
      ranked: d.etqw.ranked ? 1 : 0,
      timeleft: d.etqw.timeLeftMs,
      gamestate: d.etqw.gameState,
      servertype: d.etqw.serverType,
    });
    if (d.etqw.interestedClients !== null) out.interested_clients = d.etqw.interestedClients;
    if (d.etqw.connectedClients !== null)
      Object.assign(out, {
        connected_clients: d.etqw.connectedClients,
        max_clients: d.etqw.maxClients,
      });
  }
  if (d.playersEx !== null) {
    out.players_ex = d.playersEx.map((p) => ({
      id: p.id,
      xp: round3(p.xp),
      team: p.team,
      kills: p.kills,
      deaths: p.deaths,
    }));
  }
  return out;
}

function ase(c: LegacyCapture): Json {
  const [packet] = packetsOf(c);
  const d = decodeAseResponse(packet!);
  return {
    gamename: d.gameName,
    hostport: d.gamePort,
    hostname: d.hostname,
    gametype: d.gameType,
    map: d.map,
    version: d.version,
    password: d.password,
    numplayers: d.numPlayers,
    maxplayers: d.maxPlayers,
    rules: toRecord(d.rules),
    players: d.players,
  };
}

function halflifeMessage(m: HalfLifeMessage): Json {
  switch (m.type) {
    case "C":
    case "m": {
      const out: Json = {
        type: m.type,
        address: m.address,
        hostname: m.hostname,
        map: m.map,
        gamedir: m.gamedir,
        description: m.description,
        numplayers: m.numPlayers,
        maxplayers: m.maxPlayers,
        protocol: m.protocol,
      };
      if (m.type === "m") {
        Object.assign(out, {
          servertype: m.serverType,
          os: m.os,
          password: m.passwordProtected ? 1 : 0,
          ismod: m.mod === null ? 0 : 1,
        });
        if (m.mod !== null) {
          Object.assign(out, {
            mod_info_url: m.mod.infoUrl,
            mod_download_url: m.mod.downloadUrl,
            mod_reserved: m.mod.reserved,
            mod_version: m.mod.version,
            mod_size: m.mod.sizeBytes,
            mod_svonly: m.mod.serverSideOnly ? 1 : 0,
            mod_cldll: m.mod.customClientDll ? 1 : 0,
          });
        }
        if (m.secure !== null) out.secure = m.secure ? 1 : 0;
        if (m.bots !== null) out.bots = m.bots;
      }
      out.trailing_hex = m.trailing.toString("hex");
      return out;
    }
    case "I": {
      const out: Json = {
        type: "I",
        protocol: m.protocol,
        hostname: m.hostname,
        map: m.map,
        gamedir: m.gamedir,
        description: m.description,
        appid: m.appId,
        numplayers: m.numPlayers,
        maxplayers: m.maxPlayers,
        bots: m.bots,
        servertype: m.serverType,
        os: m.os,
        password: m.passwordProtected ? 1 : 0,
        secure: m.secure ? 1 : 0,
        version: m.version,
      };
      if (m.edf !== null) out.edf = m.edf;
      if (m.gamePort !== null) out.port = m.gamePort;
      if (m.steamId !== null) out.steamid = m.steamId;
      if (m.sourceTvPort !== null)
        Object.assign(out, { sourcetv_port: m.sourceTvPort, sourcetv_name: m.sourceTvName });
      if (m.keywords !== null) out.keywords = m.keywords;
      if (m.gameId !== null) out.gameid = m.gameId;
      out.trailing_hex = m.trailing.toString("hex");
      return out;
    }
    case "D":
      return {
        type: "D",
        count: m.countField,
        players: m.players.map((p) => ({
          index: p.index,
          name: p.name,
          score: p.score,
          time: round3(p.durationSeconds),
        })),
      };
    case "E":
      return {
        type: "E",
        count: m.countField,
        rules: toRecord(m.rules),
        pairs_read: m.rules.length,
      };
    case "infostring":
      return { type: "infostring", info: toRecord(m.pairs) };
    case "j":
      return { type: "j" };
  }
}

function halflife(c: LegacyCapture): Json {
  return { messages: decodeHalfLifeDatagrams(packetsOf(c)).map(halflifeMessage) };
}

const MAPPERS: Record<string, (c: LegacyCapture) => Json> = {
  quake3: quake,
  quake2: quake,
  gamespy1,
  gamespy2,
  gamespy3,
  "gamespy3-jc2mp": jc2mp,
  doom3,
  "doom3-quake4": doom3,
  "doom3-etqw": doom3,
  "doom3-etqw-infoex": doom3,
  ase,
  "halflife-won": halflife,
  "goldsrc-a2s": halflife,
};

/** The capture decoded into the `expected` shape, or null for a protocol we do not know. */
export function decodeToExpectedShape(c: LegacyCapture): Json | null {
  const mapper = MAPPERS[c.protocol];
  return mapper === undefined ? null : mapper(c);
}
