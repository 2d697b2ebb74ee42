import type { FetchLike } from '@matchplane/sdk';

/**
 * Simulated geography. Every demo player runs on this machine, so left alone each would measure
 * ~1 ms to every region and placement would have nothing to explain. Instead each player gets a
 * home city with a typical round trip to each region, and that round trip is put on the network:
 * the player reaches each region's probe edge through a loopback proxy that holds every byte half
 * of it each way (city-network.ts). The player answers every challenge at once; the edge measures
 * the distance the proxy makes, as it would a real one. Nothing else is delayed.
 */

/** The regions the demo runs an edge for, as the cities below know them. */
export const DEMO_REGIONS: readonly string[] = ['eu-west', 'us-east', 'us-west', 'ap-southeast'];

export interface SimulatedLocation {
  readonly city: string;
  /** Round trip (ms) to each region; a region not listed is far away (see `simulatedRttMs`). */
  readonly rttMs: Readonly<Record<string, number>>;
}

/** Groups of nearby cities, each group close (< 50 ms, the matcher's first ceiling) to one region. */
const AREAS: readonly (readonly SimulatedLocation[])[] = [
  [
    { city: 'Paris', rttMs: { 'eu-west': 12, 'us-east': 82, 'us-west': 146, 'ap-southeast': 164 } },
    {
      city: 'Berlin',
      rttMs: { 'eu-west': 21, 'us-east': 95, 'us-west': 158, 'ap-southeast': 151 },
    },
    { city: 'London', rttMs: { 'eu-west': 9, 'us-east': 74, 'us-west': 139, 'ap-southeast': 172 } },
    {
      city: 'Madrid',
      rttMs: { 'eu-west': 26, 'us-east': 98, 'us-west': 160, 'ap-southeast': 180 },
    },
  ],
  [
    {
      city: 'New York',
      rttMs: { 'eu-west': 78, 'us-east': 8, 'us-west': 67, 'ap-southeast': 236 },
    },
    {
      city: 'Chicago',
      rttMs: { 'eu-west': 97, 'us-east': 23, 'us-west': 49, 'ap-southeast': 205 },
    },
    {
      city: 'Toronto',
      rttMs: { 'eu-west': 92, 'us-east': 17, 'us-west': 64, 'ap-southeast': 221 },
    },
    {
      city: 'Atlanta',
      rttMs: { 'eu-west': 101, 'us-east': 19, 'us-west': 55, 'ap-southeast': 214 },
    },
  ],
  [
    {
      city: 'Seattle',
      rttMs: { 'eu-west': 141, 'us-east': 69, 'us-west': 11, 'ap-southeast': 158 },
    },
    {
      city: 'Los Angeles',
      rttMs: { 'eu-west': 145, 'us-east': 63, 'us-west': 17, 'ap-southeast': 169 },
    },
    {
      city: 'Denver',
      rttMs: { 'eu-west': 118, 'us-east': 41, 'us-west': 29, 'ap-southeast': 182 },
    },
    {
      city: 'Vancouver',
      rttMs: { 'eu-west': 139, 'us-east': 72, 'us-west': 14, 'ap-southeast': 161 },
    },
  ],
  [
    {
      city: 'Singapore',
      rttMs: { 'eu-west': 163, 'us-east': 229, 'us-west': 171, 'ap-southeast': 7 },
    },
    {
      city: 'Jakarta',
      rttMs: { 'eu-west': 176, 'us-east': 241, 'us-west': 182, 'ap-southeast': 19 },
    },
    {
      city: 'Kuala Lumpur',
      rttMs: { 'eu-west': 170, 'us-east': 236, 'us-west': 178, 'ap-southeast': 12 },
    },
    {
      city: 'Bangkok',
      rttMs: { 'eu-west': 181, 'us-east': 247, 'us-west': 190, 'ap-southeast': 31 },
    },
  ],
];

/**
 * Where player `index` (0-based) of `players` lives, for matches of `matchSize` players: the
 * players form `players / matchSize` groups, each in one area, and consecutive players belong to
 * different groups, so the queue order interleaves areas and the matcher has to place by latency
 * rather than by who queued first.
 */
export function locationFor(index: number, players: number, matchSize: number): SimulatedLocation {
  const groups = Math.max(1, Math.floor(players / matchSize));
  const group = index % groups;
  const member = Math.floor(index / groups);
  const area = AREAS[group % AREAS.length]!;
  const base = area[member % area.length]!;
  // Players beyond the area's cities share one, a little further out each time round.
  const lap = Math.floor(member / area.length);
  if (lap === 0) return base;
  return {
    city: `${base.city} ${lap + 1}`,
    rttMs: Object.fromEntries(Object.entries(base.rttMs).map(([r, ms]) => [r, ms + 3 * lap])),
  };
}

/** The simulated round trip to `region`; an unknown region (custom PROBE_REGIONS) is far away. */
export function simulatedRttMs(location: SimulatedLocation, region: string): number {
  return location.rttMs[region] ?? 150 + (hash(region) % 100);
}

const HEARTBEAT = /\/v1\/queue\/tickets\/[^/?]+\/heartbeat$/;

export interface SimulatedFetchHooks {
  /** Every heartbeat the API answered successfully, with the ticket state it reported. */
  onHeartbeat?: (ticketState: string) => void;
}

/**
 * A fetch for the player's PlayerClient: global fetch, except that a request to a probe edge goes
 * by the player's city's route to it (`routes`: edge origin to the origin of the city's proxy in
 * front of it, as a real client's packets take its own path), and that successful heartbeat
 * answers are reported to `hooks` (the SDK's heartbeat loop reports only failures).
 */
export function simulatedFetch(
  routes: Readonly<Record<string, string>>,
  hooks: SimulatedFetchHooks = {},
): FetchLike {
  return async (requested, init) => {
    const origin = new URL(requested).origin;
    const route = routes[origin];
    const url = route === undefined ? requested : route + requested.slice(origin.length);
    const response = await globalThis.fetch(url, init);
    if (hooks.onHeartbeat && HEARTBEAT.test(url) && response.ok) {
      const ticket = (await response
        .clone()
        .json()
        .catch(() => undefined)) as { state?: unknown } | undefined;
      if (typeof ticket?.state === 'string') hooks.onHeartbeat(ticket.state);
    }
    return response;
  };
}

function hash(text: string): number {
  let h = 0;
  for (const char of text) h = (h * 31 + char.charCodeAt(0)) >>> 0;
  return h;
}
