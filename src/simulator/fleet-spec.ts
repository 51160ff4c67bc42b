/**
 * What a simulated game server is: its address, the region a simulated master files it under,
 * and the state it reports. The A2S simulator answers queries from this; the simulated master
 * lists and filters on it. Behaviour knobs (loss, splitting, compression, challenge mode, ...)
 * extend this in the simulator.
 */
export interface SimServerState {
  name: string;
  map: string;
  folder: string;
  game: string;
  appId: number;
  players: number;
  maxPlayers: number;
  bots: number;
  /** 'd' dedicated, 'l' listen, 'p' SourceTV proxy. */
  serverType: 'd' | 'l' | 'p';
  /** 'l' linux, 'w' windows, 'm' mac. */
  environment: 'l' | 'w' | 'm';
  passwordProtected: boolean;
  vacSecured: boolean;
  version: string;
  keywords: string[];
  gamePort: number;
}

export interface SimServerAddress {
  /** A loopback address (127.0.0.0/8 or ::1). */
  host: string;
  queryPort: number;
}

export interface SimServerSpec extends SimServerAddress {
  /** Master region code: 0x00-0x07, or 0xFF. */
  region: number;
  state: SimServerState;
}
