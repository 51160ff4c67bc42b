/**
 * From captured datagrams of one protocol to the normalised ServerStatus, for `gsindex decode`
 * and tests. Where a protocol's reply does not say what it is (GameSpy v2 sections, JC2MP), the
 * variant is recognised from the bytes.
 */
import { ProtocolError } from '../errors';
import type { ServerStatus } from '../status';
import { decodeAseResponse } from './ase';
import { decodeDoom3Response } from './doom3';
import { decodeGamespy1Response } from './gamespy1';
import { ALL_SECTIONS, decodeGamespy2Response } from './gamespy2';
import type { Gamespy2Response } from './gamespy2';
import { GAMESPY3_CHALLENGE, decodeGamespy3Response, decodeJc2mpResponse, isSplitDatagram } from './gamespy3';
import { decodeHalfLifeDatagrams } from './halflife';
import { decodeQuakeResponse } from './quake3';
import type { LegacyProtocol } from './quirks';
import type { LegacyDecodeOptions } from './text';
import { aseToStatus, doom3ToStatus, gamespy1ToStatus, gamespy2ToStatus, gamespy3ToStatus, halfLifeToStatus, jc2mpToStatus, quakeToStatus } from './to-status';

/** A GameSpy v2 reply whose request is unknown: players+teams when that reads cleanly, else all sections. */
export function decodeGamespy2Unknown(packet: Buffer, options: LegacyDecodeOptions = {}): Gamespy2Response {
  if (packet[5] === 0x00) {
    try {
      const d = decodeGamespy2Response(packet, { server: false, players: true, teams: true }, options);
      if (d.trailingBytes === 0) return d;
    } catch (err) {
      if (!(err instanceof ProtocolError)) throw err;
    }
  }
  return decodeGamespy2Response(packet, ALL_SECTIONS, options);
}

function single(packets: readonly Buffer[], protocol: string): Buffer {
  const [first] = packets;
  if (first === undefined) throw new ProtocolError('INVALID_ARGUMENT', `no datagram to decode as ${protocol}`);
  return first;
}

export function decodeLegacyStatus(protocol: LegacyProtocol, packets: readonly Buffer[]): ServerStatus {
  switch (protocol) {
    case 'quake2':
    case 'quake3':
      return quakeToStatus(decodeQuakeResponse(single(packets, protocol)), protocol);
    case 'gamespy1':
      single(packets, protocol);
      return gamespy1ToStatus(decodeGamespy1Response(packets));
    case 'gamespy2':
      single(packets, protocol);
      return gamespy2ToStatus(packets.map((p) => decodeGamespy2Unknown(p)));
    case 'gamespy3': {
      const replies = packets.filter((p) => p[0] !== GAMESPY3_CHALLENGE);
      single(replies, protocol);
      if (!replies.every(isSplitDatagram)) return gamespy2ToStatus(replies.map((p) => decodeGamespy2Unknown(p)));
      // JC2MP: one datagram numbered 0 without the last flag, u16 count after the server keys (§3.5).
      if (replies.length === 1 && replies[0]![14] === 0) {
        try {
          return jc2mpToStatus(decodeJc2mpResponse(replies[0]!));
        } catch (err) {
          if (!(err instanceof ProtocolError)) throw err;
        }
      }
      const split = decodeGamespy3Response(replies);
      return gamespy3ToStatus(split);
    }
    case 'doom3':
      return doom3ToStatus(decodeDoom3Response(single(packets, protocol)));
    case 'halflife':
      single(packets, protocol);
      return halfLifeToStatus(decodeHalfLifeDatagrams(packets));
    case 'ase':
      return aseToStatus(decodeAseResponse(single(packets, protocol)));
  }
}
