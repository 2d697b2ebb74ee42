import { Inject, Injectable } from '@nestjs/common';
import {
  parseProbeEdges,
  parseQueueModes,
  parseRegions,
  parseAcceptanceTimeouts,
  parseRejoinGrace,
  parseSearchTimeouts,
  type QueueMode,
} from '@matchplane/config';
import {
  isUuid,
  MAX_ATTRIBUTES_PER_MODE,
  NO_ATTRIBUTES,
  resolveTicketAttributes,
  type ModeAttributeSchema,
  type TicketAttributes,
} from '@matchplane/domain';
import { ActiveRuleSet } from '@matchplane/rule-sets';
import { ApiConfig } from '../api.config';
import { ErrorCode, type TicketAttributeOption } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';

/** The most party members one party enqueue may name roles for (a team holds at most 59). */
const MAX_PARTY_MEMBER_ROLES = 59;

/**
 * The configured modes and regions, with the lookups routes use to refuse unknown ones. The modes'
 * shapes and attribute declarations are the active rule set's (libs/rule-sets), read at each call.
 */
@Injectable()
export class QueuePolicy {
  readonly regions: readonly string[];
  readonly heartbeatIntervalMs: number;
  /** QUEUE_SEARCH_TIMEOUTS: each mode's search timeout (ms); a mode absent has none. */
  readonly searchTimeoutsMs: ReadonlyMap<string, number>;
  /** Each region's probe edge endpoints (PROBE_EDGES); undefined when clients probe the API. */
  readonly probeEdges: Readonly<Record<string, string[]>> | undefined;
  /** QUEUE_ACCEPTANCE_TIMEOUTS: each ready-check mode's acceptance timeout (ms). */
  readonly acceptanceTimeoutsMs: ReadonlyMap<string, number>;
  /** QUEUE_REJOIN_GRACE: how long a player who left a running match of each mode may rejoin (ms). */
  readonly rejoinGraceMs: ReadonlyMap<string, number>;

  constructor(
    @Inject(ApiConfig) config: ApiConfig,
    private readonly ruleSet: ActiveRuleSet,
  ) {
    // A rule set keeps the environment's mode names; their timeouts stay the environment's.
    const modes = parseQueueModes(config.QUEUE_MODES);
    this.regions = parseRegions(config.PROBE_REGIONS);
    this.heartbeatIntervalMs = config.TICKET_HEARTBEAT_INTERVAL_MS;
    this.searchTimeoutsMs = parseSearchTimeouts(
      config.QUEUE_SEARCH_TIMEOUTS,
      modes.map(({ mode }) => mode),
    );
    this.probeEdges =
      config.PROBE_EDGES === undefined
        ? undefined
        : Object.fromEntries(
            parseProbeEdges(config.PROBE_EDGES).map(({ region, endpoints }) => [
              region,
              [...endpoints],
            ]),
          );
    this.acceptanceTimeoutsMs = parseAcceptanceTimeouts(
      config.QUEUE_ACCEPTANCE_TIMEOUTS,
      modes.map(({ mode }) => mode),
    );
    this.rejoinGraceMs = parseRejoinGrace(
      config.QUEUE_REJOIN_GRACE,
      modes.map(({ mode }) => mode),
    );
  }

  /** Every mode with its shape under the active rule set. */
  get modes(): readonly QueueMode[] {
    return this.ruleSet.current().modes;
  }

  /**
   * What GET /v1/queue/options tells clients of a mode's timeouts: its ready check and its search
   * timeout (each left out when the mode has none).
   */
  timeoutOptions(mode: string): {
    acceptanceTimeoutMs?: number;
    searchTimeoutMs?: number;
    rejoinGraceMs?: number;
  } {
    const acceptance = this.acceptanceTimeoutsMs.get(mode);
    const search = this.searchTimeoutsMs.get(mode);
    const rejoin = this.rejoinGraceMs.get(mode);
    return {
      ...(acceptance === undefined ? {} : { acceptanceTimeoutMs: acceptance }),
      ...(search === undefined ? {} : { searchTimeoutMs: search }),
      ...(rejoin === undefined ? {} : { rejoinGraceMs: rejoin }),
    };
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

  /**
   * The attributes a ticket of `mode` is stored with: `given` checked against the mode's
   * declaration (QUEUE_MODE_ATTRIBUTES), defaults filled in. 400 VALIDATION_FAILED naming every
   * attribute that is unknown, ill-typed, not an allowed value, out of range or missing.
   */
  attributes(mode: string, given: unknown): TicketAttributes {
    if (given !== null && typeof given === 'object' && !Array.isArray(given)) {
      const count = Object.keys(given).length;
      // Before naming each one: a body of thousands of made-up names gets one line, not thousands.
      if (count > MAX_ATTRIBUTES_PER_MODE) {
        const problem = `at most ${MAX_ATTRIBUTES_PER_MODE} attributes, got ${count}`;
        throw new CodedError(ErrorCode.VALIDATION_FAILED, `attributes: ${problem}`, {
          errors: [{ field: 'attributes', problems: [problem] }],
        });
      }
    }
    const result = resolveTicketAttributes(this.attributeSchema(mode), given);
    if ('attributes' in result) return result.attributes;
    const errors = result.problems.map(({ attribute, message }) => ({
      field: attribute === '' ? 'attributes' : `attributes.${attribute}`,
      problems: [message],
    }));
    throw new CodedError(
      ErrorCode.VALIDATION_FAILED,
      errors.map(({ field, problems }) => `${field}: ${problems.join(', ')}`).join('; '),
      { errors },
    );
  }

  /**
   * Each party member's attributes when it declares its own roles (`memberRoles`, player id ->
   * roles): the party's `attributes` with the roles rule's set replaced, checked as a ticket's
   * are. A 400 names `memberRoles.<playerId>`; the service checks the ids are the party's.
   */
  memberRoles(
    mode: string,
    attributes: TicketAttributes,
    given: unknown,
  ): Map<string, TicketAttributes> {
    const members = new Map<string, TicketAttributes>();
    if (given === undefined) return members;
    const refuse = (field: string, problem: string): never => {
      throw new CodedError(ErrorCode.VALIDATION_FAILED, `${field}: ${problem}`, {
        errors: [{ field, problems: [problem] }],
      });
    };
    const schema = this.attributeSchema(mode);
    const rule = schema.rules.find((r) => r.kind === 'roles');
    if (!rule) return refuse('memberRoles', `mode ${mode} has no roles rule`);
    const entries = Object.entries(given as Record<string, unknown>);
    if (entries.length > MAX_PARTY_MEMBER_ROLES) {
      return refuse(
        'memberRoles',
        `at most ${MAX_PARTY_MEMBER_ROLES} members, got ${entries.length}`,
      );
    }
    for (const [playerId, roles] of entries) {
      const field = `memberRoles.${playerId}`;
      if (!isUuid(playerId)) refuse(field, "must be a member's player id");
      const result = resolveTicketAttributes(schema, { ...attributes, [rule.attribute]: roles });
      if (!('attributes' in result)) {
        refuse(field, result.problems.map((p) => p.message).join(', '));
      } else {
        members.set(playerId, result.attributes);
      }
    }
    return members;
  }

  /** What GET /v1/queue/options tells clients about a mode's attributes. */
  attributeOptions(mode: string): TicketAttributeOption[] {
    return this.attributeSchema(mode).attributes.map((attribute) => {
      const required = attribute.default === undefined;
      switch (attribute.type) {
        case 'string':
          return { ...attribute, values: [...attribute.values], required };
        case 'set': {
          const { default: fallback, ...declared } = attribute;
          return {
            ...declared,
            values: [...attribute.values],
            required,
            ...(fallback ? { default: [...fallback] } : {}),
          };
        }
        case 'number':
          return { ...attribute, required };
      }
    });
  }

  private attributeSchema(mode: string): ModeAttributeSchema {
    return this.ruleSet.current().attributes.get(mode) ?? NO_ATTRIBUTES;
  }
}
