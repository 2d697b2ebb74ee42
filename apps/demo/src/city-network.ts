import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { DemoFailure } from './failure';
import { simulatedRttMs, type SimulatedLocation } from './locations';
import { REPO_ROOT } from './stack';

const PROXY_ENTRY = 'dist/apps/demo/src/delay-proxy.main.js';
const START_TIMEOUT_MS = 15_000;

/**
 * The simulated cities' networks: for every (city, region) pair a loopback TCP proxy in front of
 * the region's probe edge that adds the city's round trip to it (apps/demo/src/delay-proxy.ts),
 * all in one process of their own so the demo's own work never delays their timers. A player's
 * requests to an edge go through its city's proxy (see `routesFor`) and it answers at once: the
 * edge measures the distance on its own clock, as it would a real player's.
 */
export class CityNetwork {
  private constructor(
    private readonly child: ChildProcess,
    /** city -> edge origin -> proxy origin */
    private readonly routes: ReadonlyMap<string, Readonly<Record<string, string>>>,
  ) {}

  /** One proxy per (city, region) of `locations` x `edgeUrls`, listening once this resolves. */
  static async start(
    edgeUrls: Readonly<Record<string, string>>,
    locations: readonly SimulatedLocation[],
  ): Promise<CityNetwork> {
    const cities = new Map(locations.map((location) => [location.city, location]));
    const pairs = [...cities.values()].flatMap((location) =>
      Object.entries(edgeUrls).map(([region, url]) => ({
        city: location.city,
        edge: new URL(url),
        rttMs: simulatedRttMs(location, region),
      })),
    );
    const args = pairs.flatMap(({ edge, rttMs }) => [
      `${edge.hostname}:${edge.port}`,
      String(rttMs),
    ]);
    const child = spawn(process.execPath, [path.join(REPO_ROOT, PROXY_ENTRY), ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ports = await new Promise<number[]>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(
        () => reject(new DemoFailure(`the cities' delay proxies did not start: ${output}`)),
        START_TIMEOUT_MS,
      );
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const line = /\{"port":\d+,"ports":(\[[\d,]*\])\}/.exec(output);
        if (!line) return;
        clearTimeout(timer);
        resolve(JSON.parse(line[1]!) as number[]);
      });
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new DemoFailure(`the cities' delay proxies exited (${code ?? signal}): ${output}`));
      });
    });
    const routes = new Map<string, Record<string, string>>();
    pairs.forEach(({ city, edge }, i) => {
      const cityRoutes = routes.get(city) ?? {};
      cityRoutes[edge.origin] = `http://127.0.0.1:${ports[i]!}`;
      routes.set(city, cityRoutes);
    });
    return new CityNetwork(child, routes);
  }

  /** How many proxies run (cities x regions). */
  get size(): number {
    let size = 0;
    for (const cityRoutes of this.routes.values()) size += Object.keys(cityRoutes).length;
    return size;
  }

  /** The routes of `location`'s city: edge origin -> the origin of its proxy to that edge. */
  routesFor(location: SimulatedLocation): Readonly<Record<string, string>> {
    return this.routes.get(location.city) ?? {};
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
  }
}
