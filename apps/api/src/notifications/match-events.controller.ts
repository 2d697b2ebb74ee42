import { Get, Param, Query } from '@nestjs/common';
import { ErrorCode, type MatchEventsResponse } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import type { AuthenticatedSession } from '@matchplane/players';
import { CurrentSession } from '../auth/player-auth.guard';
import { MatchEventsQuery } from './match-events.dto';
import { MatchReplayReader } from './match-replay.reader';
import { UuidParamPipe } from '../http/uuid-input';
import { Answers } from '../http/openapi/api-answers.decorator';
import { PlayerController } from '../auth/player-controller.decorator';

const matchId = new UuidParamPipe('match id');

/** The notification stream's history over HTTP: what a socket resuming from `after` is sent. */
@PlayerController('matches', 'notifications')
export class MatchEventsController {
  constructor(private readonly reader: MatchReplayReader) {}

  @Get(':id/events')
  @Answers({
    summary: "A match's notifications after revision `after`, as a resuming socket would get them",
    caller: 'player',
    status: 200,
    body: 'MatchEventsResponse',
    errors: [ErrorCode.VALIDATION_FAILED, ErrorCode.NOT_FOUND],
  })
  async events(
    @Param('id', matchId) id: string,
    @Query() query: MatchEventsQuery,
    @CurrentSession() session: AuthenticatedSession,
  ): Promise<MatchEventsResponse> {
    const replay = await this.reader.after(session.playerId, id, query.after ?? 0);
    // A match of other players is answered like one that does not exist.
    if (!replay) throw new CodedError(ErrorCode.NOT_FOUND, `No match ${id} of this player`);
    return replay;
  }
}
