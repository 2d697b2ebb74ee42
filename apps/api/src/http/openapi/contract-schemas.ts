import {
  BACKFILL_STATES,
  ErrorCode,
  type AssignmentResponse,
  type AvoidListResponse,
  type AvoidedPlayerEntry,
  type BlockListResponse,
  type BlockedPlayerEntry,
  type BackfillConnectResponse,
  type BackfillResponse,
  type InitialConnectResponse,
  type MatchEventMessage,
  type MatchEventsResponse,
  type MatchHistoryEntry,
  type MatchHistoryResponse,
  type MatchResultResponse,
  type PartyMember,
  type PartyResponse,
  type PartyTicketResponse,
  type PlayerPresenceResponse,
  type ProbeAnswerResponse,
  type ProbeChallengeResponse,
  type ProbeMeasurementResponse,
  type QueueModeOption,
  type QueueOptionsResponse,
  type ReadyCheckAnswerResponse,
  type RegisterServerResponse,
  type ResyncMessage,
  type RosterEntryView,
  type RosterManifestView,
  type RosterResponse,
  type ServerHeartbeatResponse,
  type SessionResponse,
  type TicketExplanation,
  type TicketResponse,
} from '@matchplane/contracts';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import {
  arrayOf,
  bool,
  dateTime,
  int,
  mapOf,
  nullable,
  num,
  object,
  oneOfStrings,
  ref,
  schemaOf,
  str,
  uuid,
} from './schema-builders';
import { LOBBY_SCHEMAS } from './lobby-schemas';
import { ADMIN_SCHEMAS } from './admin-schemas';

/**
 * The response bodies of the HTTP contract as OpenAPI schemas, one per interface of libs/contracts
 * (same names), merged into `components.schemas`. The contract e2e validates real answers against
 * them, so a field added to an interface and answered must be added here too.
 */
const attributes = mapOf(
  { oneOf: [str(), num(), arrayOf(str())] },
  'The ticket attributes, defaults filled in (a set attribute is a list of its values)',
);

const problem: SchemaObject = {
  type: 'object',
  description:
    'RFC 9457 problem details (application/problem+json). `code` is the stable machine-readable code; `type` is derived from it',
  required: ['type', 'title', 'status', 'code'],
  properties: {
    type: str('https://matchplane.dev/problems/<code in kebab case>'),
    title: str(),
    status: int(),
    code: oneOfStrings(Object.values(ErrorCode)),
    detail: str(),
    instance: str('The request path'),
    errors: arrayOf(
      object({ field: str(), problems: arrayOf(str()) }),
      'Per-field problems of a validation failure',
    ),
    correlationId: str('On 500s: quote it to find the log line'),
    matchState: str('On ASSIGNMENT_NOT_READY, MATCH_ENDED and NOT_AWAITING_ACCEPTANCE'),
    endReason: str('On MATCH_ENDED (the match) and TICKET_FINISHED (the ticket)'),
    ticketState: str('On TICKET_FINISHED'),
    playerId: str('The party member a party enqueue was refused for'),
  },
  additionalProperties: false,
};

const matchEvent = schemaOf<MatchEventMessage>()(
  {
    type: oneOfStrings(['event']),
    event: str('e.g. match.state_changed'),
    matchId: uuid(),
    revision: int(),
    state: str('The state the match entered at this revision'),
    occurredAt: dateTime(),
  },
  { serverRegion: str('From PROCESS_READY on: where the game server runs') },
);
const resync = schemaOf<ResyncMessage>()({
  type: oneOfStrings(['resync']),
  matchId: uuid(),
  state: str(),
  revision: int(),
  reason: oneOfStrings(['RETENTION_EXPIRED', 'BUFFER_OVERFLOW', 'UNKNOWN_REVISION']),
});

const ticket = schemaOf<TicketResponse>()(
  {
    id: uuid(),
    playerId: uuid(),
    mode: str(),
    state: str('SEARCHING, MATCHED, ASSIGNED, COMPLETED, CANCELLED, EXPIRED, ...'),
    revision: int(),
    regionsMeasured: arrayOf(str(), 'Regions with a server-measured RTT, sorted'),
    predictedRttMs: mapOf(num()),
    enqueuedAt: dateTime(),
    lastHeartbeatAt: dateTime(),
    waitSeconds: num(),
    attributes,
  },
  {
    matchId: uuid(),
    endReason: str('Why the ticket ended (NO_SHOW: a cooldown follows)'),
    explanation: schemaOf<TicketExplanation>()({
      code: str(),
      message: str(),
      evaluatedAt: dateTime(),
    }),
    estimatedWaitSeconds: nullable(num()),
    partyTicketId: uuid(),
    partySize: int(),
  },
);

const attributeOption: SchemaObject = {
  oneOf: [
    object(
      {
        name: str(),
        type: oneOfStrings(['string']),
        values: arrayOf(str()),
        required: bool(),
      },
      { default: str() },
    ),
    object(
      {
        name: str(),
        type: oneOfStrings(['number']),
        min: num(),
        max: num(),
        integer: bool(),
        required: bool(),
      },
      { default: num() },
    ),
    object(
      {
        name: str(),
        type: oneOfStrings(['set']),
        values: arrayOf(str()),
        required: bool(),
      },
      { default: arrayOf(str()) },
    ),
  ],
};

const probeAnswer = {
  region: str(),
  rttMs: num('Server receive time minus issue time of this challenge'),
  estimateMs: num('The estimate placement uses (median of the retained samples)'),
  samplesMs: arrayOf(num()),
};

const backfill = {
  requestId: uuid(),
  matchId: uuid(),
  team: int(),
  slots: int(),
  state: oneOfStrings(BACKFILL_STATES),
  expiresAt: dateTime(),
  playerIds: arrayOf(uuid()),
  revision: int(),
};
const backfillOptional = { reason: str(), rosterRevision: int() };

export const CONTRACT_SCHEMAS: Record<string, SchemaObject> = {
  Problem: problem,
  SessionResponse: schemaOf<SessionResponse>()(
    { token: str('Opaque bearer token'), expiresAt: dateTime(), playerId: uuid() },
    { deviceSecret: str('Only when a new guest was created: keep it to sign in again') },
  ),
  ProbeChallengeResponse: schemaOf<ProbeChallengeResponse>()({
    challengeId: uuid(),
    region: str(),
    nonce: str('Echo it back in the answer; single use'),
    issuedAt: dateTime(),
    expiresAt: dateTime(),
  }),
  ProbeAnswerResponse: schemaOf<ProbeAnswerResponse>()(probeAnswer),
  ProbeMeasurementResponse: schemaOf<ProbeMeasurementResponse>()({
    measurementId: str(),
    ...probeAnswer,
  }),
  QueueOptionsResponse: schemaOf<QueueOptionsResponse>()(
    {
      modes: arrayOf(
        schemaOf<QueueModeOption>()(
          {
            mode: str(),
            teamSize: int(),
            teamCount: int(),
            teamSizes: arrayOf(int()),
            queueDepth: int(),
            attributes: arrayOf(attributeOption),
          },
          {
            fill: arrayOf(object({ afterMs: int(), minPlayers: int() })),
            searchTimeoutMs: int(),
            acceptanceTimeoutMs: int(),
            rejoinGraceMs: int(),
          },
        ),
      ),
      regions: arrayOf(str()),
      heartbeatIntervalMs: int('Heartbeat each live ticket at least this often'),
    },
    { probeEdges: mapOf(arrayOf(str()), "Each region's probe edge endpoints") },
  ),
  TicketResponse: ticket,
  PartyTicketResponse: schemaOf<PartyTicketResponse>()({
    partyTicketId: uuid(),
    partyId: uuid(),
    mode: str(),
    tickets: arrayOf(ref('TicketResponse')),
  }),
  BlockListResponse: schemaOf<BlockListResponse>()({
    blocked: arrayOf(
      schemaOf<BlockedPlayerEntry>()({ playerId: uuid(), blockedAt: dateTime() }),
      'Oldest block first',
    ),
    maxEntries: int('How many players the list may hold'),
  }),
  AvoidListResponse: schemaOf<AvoidListResponse>()({
    avoided: arrayOf(
      schemaOf<AvoidedPlayerEntry>()({ playerId: uuid(), avoidedAt: dateTime() }),
      'Oldest entry first',
    ),
    maxEntries: int('How many players the list may hold'),
  }),
  PartyResponse: schemaOf<PartyResponse>()(
    {
      partyId: uuid(),
      leaderId: uuid(),
      members: arrayOf(
        schemaOf<PartyMember>()(
          {
            playerId: uuid(),
            joinedAt: dateTime(),
            probed: bool(),
            regionsMeasured: arrayOf(str()),
          },
          { ticketId: uuid() },
        ),
      ),
      maxSize: int(),
      inviteExpiresAt: dateTime(),
    },
    { inviteCode: str('Only in the answer of POST /v1/parties, to the leader') },
  ),
  ...LOBBY_SCHEMAS,
  AssignmentResponse: schemaOf<AssignmentResponse>()({
    matchId: uuid(),
    state: str('ASSIGNMENT_READY or IN_PROGRESS'),
    region: str('Where the match was placed'),
    serverRegion: str('Where its game server runs'),
    serverId: str(),
    endpoint: str('host:port; connect to ws://<endpoint>/join'),
    team: int(),
    joinToken: str('Send it in the join message (docs/asyncapi.yaml)'),
    expiresAt: dateTime(),
  }),
  ReadyCheckAnswerResponse: schemaOf<ReadyCheckAnswerResponse>()({
    matchId: uuid(),
    answer: oneOfStrings(['ACCEPTED', 'DECLINED']),
    matchState: str(),
  }),
  MatchHistoryResponse: schemaOf<MatchHistoryResponse>()(
    {
      matches: arrayOf(
        schemaOf<MatchHistoryEntry>()(
          {
            matchId: uuid(),
            mode: str(),
            region: str(),
            state: str(),
            startedAt: dateTime(),
            finishedAt: dateTime(),
            team: int(),
            teams: arrayOf(object({ team: int(), playerIds: arrayOf(uuid()) })),
          },
          {
            endReason: str(),
            result: object({ outcome: str() }, { winningTeam: int(), scores: mapOf(num()) }),
            outcome: oneOfStrings(['WIN', 'LOSS', 'DRAW']),
            ratingChange: object({ before: num(), after: num(), delta: num() }),
          },
        ),
      ),
    },
    { nextCursor: str() },
  ),
  MatchEventMessage: matchEvent,
  ResyncMessage: resync,
  MatchEventsResponse: schemaOf<MatchEventsResponse>()({
    matchId: uuid(),
    state: str(),
    revision: int(),
    messages: arrayOf({ oneOf: [ref('MatchEventMessage'), ref('ResyncMessage')] }),
  }),
  RegisterServerResponse: schemaOf<RegisterServerResponse>()({
    matchId: uuid(),
    serverId: str(),
    state: str(),
    revision: int(),
  }),
  RosterResponse: schemaOf<RosterResponse>()({
    matchId: uuid(),
    serverId: str(),
    endpoint: str(),
    mode: str(),
    region: str(),
    revision: int(),
    entries: arrayOf(
      schemaOf<RosterEntryView>()({
        playerId: uuid(),
        team: int(),
        joinToken: str(),
        expiresAt: dateTime(),
      }),
    ),
    manifest: schemaOf<RosterManifestView>()({
      matchId: uuid(),
      serverId: str(),
      keyId: str(),
      digest: str(),
      entryCount: int(),
      issuedAt: int('Unix seconds'),
      revision: int(),
      signature: str(),
    }),
  }),
  InitialConnectResponse: schemaOf<InitialConnectResponse>()({
    matchId: uuid(),
    state: str(),
    revision: int(),
    noShowPlayerIds: arrayOf(uuid()),
  }),
  MatchResultResponse: schemaOf<MatchResultResponse>()({
    matchId: uuid(),
    state: str(),
    revision: int(),
  }),
  PlayerPresenceResponse: schemaOf<PlayerPresenceResponse>()(
    {
      matchId: uuid(),
      playerId: uuid(),
      presence: oneOfStrings(['CONNECTED', 'LEFT', 'REJOINED', 'ABANDONED']),
      leaveCount: int(),
      matchRevision: int(),
    },
    { rejoinDeadline: dateTime('While LEFT: rejoin before it or be ABANDONED') },
  ),
  ServerHeartbeatResponse: schemaOf<ServerHeartbeatResponse>()({
    matchId: uuid(),
    serverId: str(),
  }),
  BackfillResponse: schemaOf<BackfillResponse>()(backfill, backfillOptional),
  BackfillConnectResponse: schemaOf<BackfillConnectResponse>()(
    { ...backfill, noShowPlayerIds: arrayOf(uuid()) },
    backfillOptional,
  ),
  ...ADMIN_SCHEMAS,
};
