import { Get, Param } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RejoinTokenStore, RosterStore } from '@matchplane/allocation';
import { ErrorCode, type AssignmentResponse } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { isTerminalMatchState } from '@matchplane/domain';
import { MatchStore } from '@matchplane/matches';
import { TicketStore } from '@matchplane/tickets';
import type { AuthenticatedSession } from '@matchplane/players';
import { CurrentSession } from '../auth/player-auth.guard';
import { UuidParamPipe } from '../http/uuid-input';
import { Answers } from '../http/openapi/api-answers.decorator';
import { PlayerController } from '../auth/player-controller.decorator';

const matchId = new UuidParamPipe('match id');

/** States in which the server is registered and players may join. */
const JOINABLE = new Set(['ASSIGNMENT_READY', 'IN_PROGRESS']);

@PlayerController('matches')
export class AssignmentsController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly matches: MatchStore,
    private readonly rosters: RosterStore,
    private readonly tickets: TicketStore,
    private readonly rejoinTokens: RejoinTokenStore,
  ) {}

  @Get(':id/assignment')
  @Answers({
    summary: 'Where and how this player joins its match: endpoint and join token',
    description:
      'Poll it once the match notification says ASSIGNMENT_READY. Connect to ws://<endpoint>/join and send {"type":"join","token":<joinToken>} (docs/asyncapi.yaml). 409 ASSIGNMENT_NOT_READY carries `matchState`: poll again; 410 MATCH_ENDED carries `matchState` and `endReason`.',
    caller: 'player',
    status: 200,
    body: 'AssignmentResponse',
    errors: [
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.NOT_FOUND,
      ErrorCode.ASSIGNMENT_NOT_READY,
      ErrorCode.MATCH_ENDED,
    ],
  })
  async assignment(
    @Param('id', matchId) id: string,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<AssignmentResponse> {
    const manager = this.dataSource.manager;
    const match = await this.matches.load(manager, id);
    const participant = match?.participants.find((p) => p.playerId === session.playerId);
    // Another player's match is answered like one that does not exist.
    if (!match || !participant)
      throw new CodedError(ErrorCode.NOT_FOUND, `No match ${id} of this player`);
    if (isTerminalMatchState(match.state)) {
      const endReason = match.failureReason;
      throw new CodedError(
        ErrorCode.MATCH_ENDED,
        `Match ${id} ended ${match.state}${endReason ? ` (${endReason})` : ''}: it will never be joinable`,
        { extensions: { matchState: match.state, ...(endReason ? { endReason } : {}) } },
      );
    }
    if (!JOINABLE.has(match.state)) {
      throw new CodedError(
        ErrorCode.ASSIGNMENT_NOT_READY,
        `Match ${id} is ${match.state}: an assignment is served from ASSIGNMENT_READY until the match ends`,
        { extensions: { matchState: match.state } },
      );
    }
    // A player a backfill added to the running match is served once the server accepted the
    // roster revision that carries them (their ticket ASSIGNED), not before: the server would
    // refuse them.
    if (match.state === 'IN_PROGRESS') {
      const ticket = await this.tickets.load(manager, participant.ticketId);
      if (ticket?.matchId === id && ticket.state === 'MATCHED') {
        throw new CodedError(
          ErrorCode.ASSIGNMENT_NOT_READY,
          `Match ${id} is taking this player in as a backfill: the server has not accepted its roster yet`,
          { extensions: { matchState: match.state } },
        );
      }
    }
    const first = await this.rosters.assignmentFor(manager, id, session.playerId);
    if (!first)
      throw new CodedError(ErrorCode.NOT_FOUND, `This player holds no assignment for match ${id}`);
    // A player who left is served the token the allocator signed for its rejoin, when newer.
    const fresh =
      match.state === 'IN_PROGRESS'
        ? await this.rejoinTokens.find(manager, id, session.playerId)
        : undefined;
    const assignment = fresh && fresh.issuedAt > first.issuedAt ? { ...first, ...fresh } : first;
    return {
      matchId: id,
      state: match.state,
      region: match.region,
      // Recorded at registration, before ASSIGNMENT_READY; a match older than that records none.
      serverRegion: match.serverRegion ?? match.region,
      serverId: assignment.serverId,
      endpoint: assignment.endpoint,
      team: participant.team,
      joinToken: assignment.joinToken,
      expiresAt: assignment.expiresAt.toISOString(),
    };
  }
}
