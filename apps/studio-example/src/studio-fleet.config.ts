import { IsString, Matches } from 'class-validator';
import { EnvVar } from '@matchplane/config';
import type { StudioServer } from './studio-fleet.module';

/** One server: `id@region@host:port@rack`. */
const ENTRY = '([^@,\\s]+)@([^@,\\s]+)@([^@,\\s]+:\\d+)@([^@,\\s]+)';
const SERVER = new RegExp(`^${ENTRY}$`);
const SERVERS = new RegExp(`^${ENTRY}(,${ENTRY})*$`);

/** The example deployment's fleet inventory, validated at start-up like every config class. */
export class StudioFleetConfig {
  @EnvVar({
    description:
      'Studio fleet: its servers, comma-separated, each `id@region@host:port@rack` (e.g. s1@eu-west@10.0.0.5:7777@rack-a)',
  })
  @IsString()
  @Matches(SERVERS, {
    message: 'STUDIO_FLEET_SERVERS must list id@region@host:port@rack entries, comma-separated',
  })
  STUDIO_FLEET_SERVERS = '';
}

export function fleetServers(config: StudioFleetConfig): StudioServer[] {
  return config.STUDIO_FLEET_SERVERS.split(',').map((entry) => {
    const [, id = '', region = '', endpoint = '', rack = ''] = SERVER.exec(entry) ?? [];
    return { id, region, endpoint, rack };
  });
}
