import { Inject, Injectable } from '@nestjs/common';
import { parseQueueModes, parseRegions, type QueueMode } from '@matchplane/config';
import { ApiConfig } from '../api.config';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

/** The configured modes and regions, with the lookups routes use to refuse unknown ones. */
@Injectable()
export class QueuePolicy {
  readonly modes: readonly QueueMode[];
  readonly regions: readonly string[];
  readonly heartbeatIntervalMs: number;

  constructor(@Inject(ApiConfig) config: ApiConfig) {
    this.modes = parseQueueModes(config.QUEUE_MODES);
    this.regions = parseRegions(config.PROBE_REGIONS);
    this.heartbeatIntervalMs = config.TICKET_HEARTBEAT_INTERVAL_MS;
  }

  /** 404 UNKNOWN_REGION unless `region` is configured. */
  region(region: string): string {
    if (!this.regions.includes(region)) {
      throw new CodedError(
        ErrorCode.UNKNOWN_REGION,
        `Unknown region "${region.slice(0, 64)}"; regions: ${this.regions.join(', ')}`,
      );
    }
    return region;
  }

  /** 422 UNKNOWN_MODE unless `mode` is configured. */
  mode(mode: string): QueueMode {
    const found = this.modes.find((candidate) => candidate.mode === mode);
    if (!found) {
      throw new CodedError(
        ErrorCode.UNKNOWN_MODE,
        `Unknown mode "${mode.slice(0, 64)}"; modes: ${this.modes.map((m) => m.mode).join(', ')}`,
      );
    }
    return found;
  }
}
