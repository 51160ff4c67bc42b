/**
 * Counts the UDP datagrams a bench child sends and receives through node:dgram, whichever library
 * sends them: one counter on the socket prototype, the same small cost for every contender.
 */
import dgram from "node:dgram";
import { EventEmitter } from "node:events";

export interface DatagramCounts {
  sent: number;
  received: number;
}

export function countDatagrams(): DatagramCounts {
  const counts: DatagramCounts = { sent: 0, received: 0 };
  const proto = dgram.Socket.prototype as unknown as {
    send: (...args: unknown[]) => void;
    emit: (event: string | symbol, ...args: unknown[]) => boolean;
  };
  const send = proto.send;
  proto.send = function (this: dgram.Socket, ...args: unknown[]): void {
    counts.sent += 1;
    send.apply(this, args);
  };
  proto.emit = function (this: dgram.Socket, event: string | symbol, ...args: unknown[]): boolean {
    if (event === "message") counts.received += 1;
    return EventEmitter.prototype.emit.call(this, event, ...args);
  };
  return counts;
}
