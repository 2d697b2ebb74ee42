import { IsNotEmpty, IsOptional, IsString, Matches } from 'class-validator';
import { EnvVar, IsIntInRange, IsPort, LoggingConfig } from '@matchplane/config';

/** A probe edge: one region's stateless latency beacon. No database, no Redis. */
export class ProbeEdgeConfig extends LoggingConfig {
  @EnvVar({ description: "The region this edge measures; one of the API's PROBE_REGIONS" })
  @Matches(/^[a-z0-9_-]{1,64}$/, {
    message: 'must be a region name (lowercase letters, digits, "-", "_"), e.g. eu-west',
  })
  PROBE_EDGE_REGION = '';

  @EnvVar({ description: 'Address the edge binds (HTTP and UDP)' })
  @IsString()
  @IsNotEmpty()
  PROBE_EDGE_HOST = '0.0.0.0';

  @EnvVar({ description: 'HTTP port of the edge (challenges, answers, /live)' })
  @IsPort()
  PROBE_EDGE_PORT = 7001;

  @EnvVar({
    description:
      'UDP port of the edge (game clients: one signed challenge datagram out, its echo back; docs/PROBES.md "UDP"). Unset: HTTP only',
  })
  @IsOptional()
  @IsPort()
  PROBE_EDGE_UDP_PORT?: number = undefined;

  @EnvVar({
    description:
      'Probe key set the edge signs challenges and measurements with: a JSON map {keyId: base64Key} (or a raw key file, id ""), the same Secret the API verifies with (PROBE_KEYS_FILE there). Required: the edge refuses to start without usable key material',
  })
  @IsString()
  @IsNotEmpty({
    message: 'must be the path of the probe key file (the edge cannot sign without it)',
  })
  PROBE_KEYS_FILE = '';

  @EnvVar({
    description:
      'Key id challenges and measurements are signed with; must be in PROBE_KEYS_FILE. Required for a key map; unset for a raw key file (id "")',
  })
  @IsOptional()
  @Matches(/^[\x21-\x7e]{1,64}$/, { message: 'must be 1-64 visible ASCII characters' })
  PROBE_ACTIVE_KEY_ID?: string = undefined;

  @EnvVar({
    description:
      'How long a challenge may be answered (ms) after it left the edge; a slower answer is no usable RTT',
  })
  @IsIntInRange(100, 60_000)
  PROBE_CHALLENGE_TTL_MS = 5_000;
}
