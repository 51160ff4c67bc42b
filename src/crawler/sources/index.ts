/** Builds the list source for a master_source row, by kind. */
import type { Config } from '../../shared/config';
import type { ListSourceFactory, SourceRecord } from '../list-source';
import { createAddressListSource } from './address-list-source';
import { createManagementSource } from './management-source';
import { createSteamWebApiSource } from './steam-web-api-source';
import { createValveMasterSource } from './valve-master-source';

export function createListSourceFactory(config: Pick<Config, 'masterTimeoutMs' | 'steamWebApiKey'>, overrides: Partial<Record<SourceRecord['kind'], ListSourceFactory>> = {}): ListSourceFactory {
  return (source) => {
    const override = overrides[source.kind];
    if (override) return override(source);
    switch (source.kind) {
      case 'VALVE_UDP':
        return createValveMasterSource(source, { timeoutMs: config.masterTimeoutMs });
      case 'STEAM_WEB_API':
        return createSteamWebApiSource(source, { key: config.steamWebApiKey, timeoutMs: config.masterTimeoutMs });
      case 'ADDRESS_LIST':
        return createAddressListSource(source);
      case 'MANAGEMENT':
        return createManagementSource(source, { timeoutMs: config.masterTimeoutMs });
    }
  };
}
