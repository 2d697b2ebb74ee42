import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import {
  EnvVar,
  IsIntInRange,
  IsParsedList,
  loadConfigOrExit,
  LoggingConfig,
  parseRegions,
} from '@matchplane/config';
import { IsNotEmpty, IsString } from 'class-validator';

/**
 * Development (`npm run stack`): one probe edge per region of PROBE_REGIONS on this machine, region
 * i on HTTP port PROBE_EDGE_BASE_PORT + i and UDP port PROBE_EDGE_BASE_PORT + 100 + i. With
 * `--print` it only prints the PROBE_EDGES value the API needs for them. A real deployment runs
 * one edge per region next to that region's game servers (docker/k8s/probe-edge.yaml).
 */
class LocalEdgesConfig extends LoggingConfig {
  @EnvVar({ description: 'Regions to start an edge for' })
  @IsParsedList(parseRegions, 'comma-separated region names, e.g. eu-west,us-east')
  PROBE_REGIONS = 'eu-west,us-east,us-west,ap-southeast';

  @EnvVar({ description: 'HTTP port of the first region’s edge; the others follow' })
  @IsIntInRange(1_024, 65_000)
  PROBE_EDGE_BASE_PORT = 7_101;

  @EnvVar({ description: 'Probe key set the edges sign with (the API verifies with the same)' })
  @IsString()
  @IsNotEmpty()
  PROBE_KEYS_FILE = '.dev/probe-keys.json';

  @EnvVar({ description: 'Key id the edges sign with' })
  @IsString()
  @IsNotEmpty()
  PROBE_ACTIVE_KEY_ID = 'dev-1';
}

const config = loadConfigOrExit(LocalEdgesConfig, 'local-edges');
const regions = parseRegions(config.PROBE_REGIONS);
const httpPort = (index: number) => config.PROBE_EDGE_BASE_PORT + index;
const udpPort = (index: number) => config.PROBE_EDGE_BASE_PORT + 100 + index;

if (process.argv.includes('--print')) {
  const edges = regions.map(
    (region, index) =>
      `${region}=http://127.0.0.1:${httpPort(index)}|udp://127.0.0.1:${udpPort(index)}`,
  );
  process.stdout.write(`${edges.join(',')}\n`);
} else {
  const children: ChildProcess[] = regions.map((region, index) =>
    spawn(process.execPath, [path.join(__dirname, 'main.js')], {
      stdio: 'inherit',
      env: {
        PATH: process.env.PATH ?? '',
        LOG_LEVEL: config.LOG_LEVEL,
        LOG_FORMAT: config.LOG_FORMAT,
        PROBE_EDGE_REGION: region,
        PROBE_EDGE_HOST: '127.0.0.1',
        PROBE_EDGE_PORT: String(httpPort(index)),
        PROBE_EDGE_UDP_PORT: String(udpPort(index)),
        PROBE_KEYS_FILE: config.PROBE_KEYS_FILE,
        PROBE_ACTIVE_KEY_ID: config.PROBE_ACTIVE_KEY_ID,
      },
    }),
  );
  // One edge failing stops the others, so the stack's supervisor sees the failure.
  // A stop asked for (SIGTERM, SIGINT) ends with 0 however the edges went; an edge's own exit first
  // is the failure code.
  let stopping = false;
  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    process.exitCode = code;
  };
  for (const child of children) child.once('exit', (code) => stopAll(code ?? 1));
  process.once('SIGTERM', () => stopAll(0));
  process.once('SIGINT', () => stopAll(0));
}
