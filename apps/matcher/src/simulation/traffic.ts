import type {
  AttributeDeclaration,
  AttributeValue,
  ModeAttributeSchema,
  ModeRules,
  TicketAttributes,
} from '@matchplane/domain';
import { withSyntheticEntries } from './block-lists';
import { exponential, gaussian, mulberry32, seededUuid } from './seeded-random';

/**
 * One ticket's arrival in a queue's traffic, the simulator's input. A capture file holds one per
 * line as JSON (see docs/SIMULATOR.md); a party's members arrive together, each on its own line
 * naming the same party, and leave together.
 */
export interface Arrival {
  /** Milliseconds from the start of the traffic. */
  readonly atMs: number;
  readonly ticketId: string;
  readonly playerId: string;
  readonly mode: string;
  readonly rating: number;
  /** Measured RTT per region, ms. */
  readonly rtt: Readonly<Record<string, number>>;
  readonly attributes: TicketAttributes;
  readonly party?: { readonly id: string; readonly size: number };
  /** The player cancels after waiting this long unmatched; absent: waits for ever. */
  readonly cancelAfterMs?: number;
  /** Players this player blocked (block lists): never matched with it, either way. */
  readonly blockedPlayerIds?: readonly string[];
  /** Players this player avoids (avoid lists): matched with it, either way, only when nothing else fits. */
  readonly avoidedPlayerIds?: readonly string[];
}

/** Where the synthetic players live and how far each region's servers are from each other's. */
export const SIMULATED_REGIONS = ['eu-west', 'us-east', 'us-west', 'ap-southeast'] as const;
const HOME_WEIGHTS = [0.35, 0.3, 0.15, 0.2];
const DISTANCE_MS = [
  [0, 75, 140, 160],
  [75, 0, 65, 220],
  [140, 65, 0, 170],
  [160, 220, 170, 0],
];

export interface SyntheticTrafficOptions {
  /** Players arriving over the whole traffic. */
  readonly players: number;
  readonly seconds: number;
  readonly seed: number;
  /** The rule set whose modes the players queue for (an equal share each). */
  readonly rules: readonly ModeRules[];
  /** Declared attributes per mode: each arrival gets a value of each. */
  readonly attributes: ReadonlyMap<string, ModeAttributeSchema>;
  /** Share of players of team modes who queue in parties of 2 up to the team size; 0.3. */
  readonly partyShare?: number;
  /** Mean patience of a player before cancelling, seconds; 300. */
  readonly meanPatienceSeconds?: number;
  /** Share of players who blocked someone who queued shortly before them; 0.05. */
  readonly blockShare?: number;
  /** Share of players who avoid someone who queued shortly before them; 0.05. */
  readonly avoidShare?: number;
}

/**
 * Seeded synthetic traffic: arrivals spread evenly at random over the time span (a Poisson
 * process), players in four regions with measured RTTs to each (most measured every region),
 * ratings around 1500, attribute values drawn from their declarations, parties in team modes, a
 * patience after which each player (or party) cancels, and a few players' blocks and avoids.
 */
export function syntheticTraffic(options: SyntheticTrafficOptions): Arrival[] {
  const random = mulberry32(options.seed);
  const partyShare = options.partyShare ?? 0.3;
  const patienceMs = (options.meanPatienceSeconds ?? 300) * 1000;
  const spanMs = options.seconds * 1000;
  const arrivals: Arrival[] = [];
  let players = 0;
  while (players < options.players) {
    const rules = options.rules[Math.floor(random() * options.rules.length)]!;
    const partySize =
      rules.teamSize > 1 && random() < partyShare
        ? Math.min(2 + Math.floor(random() * (rules.teamSize - 1)), options.players - players)
        : 1;
    const atMs = Math.floor(random() * spanMs);
    const cancelAfterMs = Math.round(exponential(random, patienceMs));
    const home = weightedIndex(random, HOME_WEIGHTS);
    const schema = options.attributes.get(rules.mode);
    const attributes = drawAttributes(random, schema?.attributes);
    const party = partySize > 1 ? { id: seededUuid(random), size: partySize } : undefined;
    for (let member = 0; member < partySize; member += 1) {
      arrivals.push({
        atMs,
        ticketId: seededUuid(random),
        playerId: seededUuid(random),
        mode: rules.mode,
        rating: Math.round(1500 + 300 * gaussian(random)),
        rtt: measuredRtts(random, home),
        // Party members share the leader's attributes but for their own roles (memberRoles).
        attributes: member === 0 ? attributes : withOwnRoles(random, attributes, schema),
        ...(party ? { party } : {}),
        cancelAfterMs,
      });
    }
    players += partySize;
  }
  arrivals.sort((a, b) => a.atMs - b.atMs || compare(a.ticketId, b.ticketId));
  const blocked = withSyntheticEntries(
    arrivals,
    options.seed,
    options.blockShare ?? 0.05,
    'blockedPlayerIds',
  );
  return withSyntheticEntries(
    blocked,
    options.seed,
    options.avoidShare ?? 0.05,
    'avoidedPlayerIds',
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function weightedIndex(random: () => number, weights: readonly number[]): number {
  let roll = random();
  for (const [index, weight] of weights.entries()) {
    roll -= weight;
    if (roll < 0) return index;
  }
  return 0;
}

/** The home region's RTT (10-60 ms), and most clients also measured some or all other regions. */
function measuredRtts(random: () => number, home: number): Record<string, number> {
  const homeRtt = 10 + Math.floor(random() * 51);
  const rtt: Record<string, number> = { [SIMULATED_REGIONS[home]!]: homeRtt };
  const coverage = random();
  SIMULATED_REGIONS.forEach((region, index) => {
    if (index === home || coverage < 0.1 || (coverage < 0.25 && random() < 0.67)) return;
    const spread = DISTANCE_MS[home]![index]! * (0.85 + 0.3 * random());
    rtt[region] = Math.round(Math.min(300, Math.max(60, homeRtt + spread)));
  });
  return rtt;
}

/**
 * A string attribute takes its first value most often (the current build), a number any value, a
 * set each of its values half the time (at least one).
 */
/** `attributes` with the roles rule's set drawn anew (a party member's own roles); as is without one. */
function withOwnRoles(
  random: () => number,
  attributes: TicketAttributes,
  schema: ModeAttributeSchema | undefined,
): TicketAttributes {
  const rule = schema?.rules.find((r) => r.kind === 'roles');
  const declaration = schema?.attributes.find((a) => a.name === rule?.attribute);
  if (!declaration) return attributes;
  return { ...attributes, ...drawAttributes(random, [declaration]) };
}

function drawAttributes(
  random: () => number,
  declarations: readonly AttributeDeclaration[] | undefined,
): TicketAttributes {
  const attributes: Record<string, AttributeValue> = {};
  for (const declaration of declarations ?? []) {
    if (declaration.type === 'set') {
      const values = declaration.values;
      const drawn = values.filter(() => random() < 0.5);
      attributes[declaration.name] =
        drawn.length > 0 ? drawn : [values[Math.floor(random() * values.length)]!];
    } else if (declaration.type === 'string') {
      const values = declaration.values;
      attributes[declaration.name] =
        random() < 0.7 ? values[0]! : values[Math.floor(random() * values.length)]!;
    } else {
      const value = declaration.min + random() * (declaration.max - declaration.min);
      attributes[declaration.name] = declaration.integer ? Math.round(value) : value;
    }
  }
  return attributes;
}

// ---- capture files ------------------------------------------------------------------------------

/** Capture lines start here (any fixed instant: a replay reads times relative to the first). */
const CAPTURE_EPOCH_MS = Date.parse('2026-01-01T00:00:00.000Z');

/**
 * One arrival as a capture line: the shape of `GET /v1/admin/queue/arrivals`' `arrivals`, so an
 * operator's export replays as it is.
 */
export function captureLine(arrival: Arrival): string {
  return JSON.stringify({
    ticketId: arrival.ticketId,
    playerId: arrival.playerId,
    mode: arrival.mode,
    rating: arrival.rating,
    rtt: arrival.rtt,
    attributes: arrival.attributes,
    enqueuedAt: new Date(CAPTURE_EPOCH_MS + arrival.atMs).toISOString(),
    ...(arrival.party ? { party: arrival.party } : {}),
    ...(arrival.cancelAfterMs === undefined ? {} : { cancelAfterMs: arrival.cancelAfterMs }),
    ...(arrival.blockedPlayerIds ? { blockedPlayerIds: arrival.blockedPlayerIds } : {}),
    ...(arrival.avoidedPlayerIds ? { avoidedPlayerIds: arrival.avoidedPlayerIds } : {}),
  });
}

/**
 * Reads a capture (times relative to its earliest arrival); throws naming the line and field of
 * the first malformed arrival.
 */
export function parseCapture(text: string): Arrival[] {
  const parsed: (Omit<Arrival, 'atMs'> & { enqueuedAtMs: number })[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    const at = `line ${index + 1}`;
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`capture ${at} is not JSON`);
    }
    const need = (ok: boolean, field: string, what: string) => {
      if (!ok) throw new Error(`capture ${at}: ${field} must be ${what}`);
    };
    const enqueuedAtMs = typeof raw.enqueuedAt === 'string' ? Date.parse(raw.enqueuedAt) : NaN;
    need(Number.isFinite(enqueuedAtMs), 'enqueuedAt', 'an ISO 8601 instant');
    for (const field of ['ticketId', 'playerId', 'mode']) {
      need(typeof raw[field] === 'string' && raw[field] !== '', field, 'a non-empty string');
    }
    need(Number.isFinite(raw.rating), 'rating', 'a number');
    need(isRecord(raw.rtt), 'rtt', 'an object of region -> ms');
    need(raw.attributes === undefined || isRecord(raw.attributes), 'attributes', 'an object');
    const party = raw.party as { id?: unknown; size?: unknown } | undefined;
    need(
      party === undefined ||
        (isRecord(party) && typeof party.id === 'string' && Number.isInteger(party.size)),
      'party',
      'an object {id, size}',
    );
    need(
      raw.cancelAfterMs === undefined ||
        (Number.isFinite(raw.cancelAfterMs) && (raw.cancelAfterMs as number) >= 0),
      'cancelAfterMs',
      'a number >= 0',
    );
    const [blocked, avoided] = (['blockedPlayerIds', 'avoidedPlayerIds'] as const).map((field) => {
      const ids = raw[field];
      need(
        ids === undefined ||
          (Array.isArray(ids) && ids.every((id) => typeof id === 'string' && id !== '')),
        field,
        'a list of player ids',
      );
      return ids as string[] | undefined;
    });
    parsed.push({
      enqueuedAtMs,
      ticketId: raw.ticketId as string,
      playerId: raw.playerId as string,
      mode: raw.mode as string,
      rating: raw.rating as number,
      rtt: raw.rtt as Record<string, number>,
      attributes: (raw.attributes ?? {}) as TicketAttributes,
      ...(party ? { party: { id: party.id as string, size: party.size as number } } : {}),
      ...(raw.cancelAfterMs === undefined ? {} : { cancelAfterMs: raw.cancelAfterMs as number }),
      ...(blocked === undefined ? {} : { blockedPlayerIds: blocked }),
      ...(avoided === undefined ? {} : { avoidedPlayerIds: avoided }),
    });
  });
  const start = Math.min(...parsed.map((arrival) => arrival.enqueuedAtMs));
  return parsed
    .map(({ enqueuedAtMs, ...arrival }) => ({ atMs: enqueuedAtMs - start, ...arrival }))
    .sort((a, b) => a.atMs - b.atMs || compare(a.ticketId, b.ticketId));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
