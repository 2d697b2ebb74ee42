import { redisKeyPrefix } from '@matchplane/config';
import { Body, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { AllocationStore } from '@matchplane/allocation';
import { ApiConfig } from '../../api.config';
import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import { MatchStore } from '@matchplane/matches';
import { DEAD_LETTER_AUDIT, DeadLetterService, OutboxStatsService } from '@matchplane/outbox';
import { AuditReader } from '@matchplane/persistence';
import { PlayerRatings } from '@matchplane/players';
import { readTicketExplanation, TicketStore } from '@matchplane/tickets';
import {
  BulkReplayBody,
  DiscardDeadLetterBody,
  ListDeadLettersQuery,
  ReplayDeadLetterBody,
} from '../dead-letters.dto';
import { Operator } from '../operator.decorator';
import { OutboxIdPipe } from '../outbox-id.pipe';
import { presentFields, validatedForm } from './console-form';
import { CONSOLE_PATH, sessionCookie, type ConsoleSession } from './console-session';
import { ConsolePages } from './console-pages.decorator';
import { ConsoleNotice, CurrentConsoleSession, type ConsoleRequest } from './console.guard';
import { auditPage, deadLetterDetailPage, deadLetterListPage } from './dead-letters.page';
import { seeOther, sendPage } from './console.layout';
import { queryString } from './html';
import { lookupPage, matchPage, playerPage } from './lookup.page';
import { outboxPage } from './outbox.page';
import { UuidParamPipe } from '../../http/uuid-input';

const FILTER_FIELDS = ['event', 'aggregateId', 'from', 'to'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const AUDIT_PAGE = 50;
const PLAYER_RECENT_MATCHES = 10;

/**
 * The operator console's pages (server-rendered HTML, no script): the outbox at a glance, dead
 * letters (list, inspect, replay, discard), the audit trail, and matches and players. Every route
 * needs a console session; every POST its CSRF token. The same services as the admin API do the
 * work, so both doors audit alike.
 */
@ConsolePages()
export class ConsoleController {
  constructor(
    private readonly deadLetters: DeadLetterService,
    private readonly outboxStats: OutboxStatsService,
    private readonly audit: AuditReader,
    private readonly matches: MatchStore,
    private readonly allocations: AllocationStore,
    private readonly tickets: TicketStore,
    private readonly ratings: PlayerRatings,
    private readonly dataSource: DataSource,
    private readonly redis: Redis,
    private readonly config: ApiConfig,
  ) {}

  @Get()
  async outbox(
    @CurrentConsoleSession() session: ConsoleSession,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const [stats, lastMinute, lastFifteenMinutes] = await Promise.all([
      this.outboxStats.stats(),
      this.outboxStats.deliveredWithin(60),
      this.outboxStats.deliveredWithin(900),
    ]);
    sendPage(reply, outboxPage(session, stats, { lastMinute, lastFifteenMinutes }));
  }

  @Post('logout')
  logout(@Req() request: ConsoleRequest, @Res() reply: FastifyReply): void {
    void reply.header('set-cookie', sessionCookie(undefined, 0, request.protocol === 'https'));
    seeOther(reply, `${CONSOLE_PATH}/login`);
  }

  @Get('dead-letters')
  async deadLetterList(
    @CurrentConsoleSession() session: ConsoleSession,
    @Query() query: unknown,
    @ConsoleNotice() notice: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const fields = presentFields(query, [...FILTER_FIELDS, 'cursor']);
    const { cursor, ...filter } = fields;
    const options = { session, filter, cursor, notice };
    let list: ListDeadLettersQuery;
    try {
      list = await validatedForm(ListDeadLettersQuery, fields);
    } catch (error) {
      if (!(error instanceof CodedError)) throw error;
      sendPage(reply, deadLetterListPage({ ...options, error: error.message }), 400);
      return;
    }
    const result = await this.deadLetters.list(list.toFilter(), list.cursor, list.limit);
    sendPage(reply, deadLetterListPage({ ...options, result }));
  }

  @Post('dead-letters/replay')
  async replayMatching(
    @Body() body: unknown,
    @Operator() operator: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const fields = presentFields(body, [...FILTER_FIELDS, 'reason']);
    const { reason: _reason, ...filter } = fields;
    const unfiltered = Object.values(filter).every((value) => value === undefined);
    const replay = await validatedForm(BulkReplayBody, { ...fields, all: unfiltered || undefined });
    const { replayed } = await this.deadLetters.replayMatching(
      replay.toSelection(),
      operator,
      replay.reason,
    );
    seeOther(
      reply,
      `${CONSOLE_PATH}/dead-letters${queryString(filter)}`,
      `Replayed ${replayed} dead letter${replayed === 1 ? '' : 's'}`,
    );
  }

  @Get('dead-letters/:id')
  async deadLetter(
    @CurrentConsoleSession() session: ConsoleSession,
    @Param('id', OutboxIdPipe) id: string,
    @ConsoleNotice() notice: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const [event, audit] = await Promise.all([
      this.deadLetters.inspect(id),
      this.audit.recent({
        targetType: DEAD_LETTER_AUDIT.targetType,
        targetId: id,
        limit: AUDIT_PAGE,
      }),
    ]);
    sendPage(reply, deadLetterDetailPage({ session, event, audit, notice }));
  }

  @Post('dead-letters/:id/replay')
  async replay(
    @Param('id', OutboxIdPipe) id: string,
    @Body() body: unknown,
    @Operator() operator: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { reason } = await validatedForm(ReplayDeadLetterBody, presentFields(body, ['reason']));
    await this.deadLetters.replay(id, operator, reason);
    seeOther(
      reply,
      `${CONSOLE_PATH}/dead-letters/${id}`,
      `Replayed #${id}: pending delivery again`,
    );
  }

  @Post('dead-letters/:id/discard')
  async discard(
    @Param('id', OutboxIdPipe) id: string,
    @Body() body: unknown,
    @Operator() operator: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { reason } = await validatedForm(DiscardDeadLetterBody, presentFields(body, ['reason']));
    await this.deadLetters.discard(id, operator, reason);
    seeOther(reply, `${CONSOLE_PATH}/audit`, `Discarded #${id}`);
  }

  @Get('audit')
  async auditTrail(
    @CurrentConsoleSession() session: ConsoleSession,
    @Query() query: unknown,
    @ConsoleNotice() notice: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { before } = presentFields(query, ['before']);
    if (before !== undefined && !/^[1-9][0-9]{0,18}$/.test(before)) {
      throw new CodedError(ErrorCode.VALIDATION_FAILED, 'before must be an audit entry id');
    }
    const entries = await this.audit.recent({ beforeId: before, limit: AUDIT_PAGE + 1 });
    const shown = entries.slice(0, AUDIT_PAGE);
    const nextBefore = entries.length > AUDIT_PAGE ? shown[shown.length - 1]?.id : undefined;
    sendPage(
      reply,
      auditPage({
        session,
        entries: shown,
        nextBefore,
        notice,
      }),
    );
  }

  @Get('lookup')
  async lookup(
    @CurrentConsoleSession() session: ConsoleSession,
    @Query() query: unknown,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { id: typed } = presentFields(query, ['id']);
    if (typed === undefined) return sendPage(reply, lookupPage({ session }));
    const id = typed.trim().toLowerCase();
    if (!UUID.test(id)) {
      return sendPage(
        reply,
        lookupPage({ session, id, error: 'An id is a UUID (a match, ticket or player id)' }),
        400,
      );
    }
    if (await this.matches.load(undefined, id))
      return seeOther(reply, `${CONSOLE_PATH}/matches/${id}`);
    const ticket = await this.tickets.load(this.dataSource.manager, id);
    if (ticket) return seeOther(reply, `${CONSOLE_PATH}/players/${ticket.playerId}`);
    const [live, recent] = await Promise.all([
      this.tickets.liveTicketOf(this.dataSource.manager, id),
      this.matches.recentOfPlayer(id, 1),
    ]);
    if (live || recent.length > 0) return seeOther(reply, `${CONSOLE_PATH}/players/${id}`);
    sendPage(
      reply,
      lookupPage({
        session,
        id,
        error: `No match, ticket or player with a match or live ticket has id ${id}`,
      }),
      404,
    );
  }

  @Get('matches/:id')
  async match(
    @CurrentConsoleSession() session: ConsoleSession,
    @Param('id', new UuidParamPipe('match id')) id: string,
    @ConsoleNotice() notice: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const match = await this.matches.load(undefined, id);
    if (!match) throw new CodedError(ErrorCode.NOT_FOUND, `No match ${id}`);
    const [allocation, timeline, deliveries] = await Promise.all([
      this.allocations.load(this.dataSource.manager, id),
      this.matches.history(id),
      this.outboxStats.deliveriesOf('match', id),
    ]);
    sendPage(reply, matchPage(session, { match, allocation, timeline, deliveries }, notice));
  }

  @Get('players/:id')
  async player(
    @CurrentConsoleSession() session: ConsoleSession,
    @Param('id', new UuidParamPipe('player id')) id: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const [ticket, matches, rating] = await Promise.all([
      this.tickets.liveTicketOf(this.dataSource.manager, id),
      this.matches.recentOfPlayer(id, PLAYER_RECENT_MATCHES),
      this.ratings.read(this.dataSource.manager, id),
    ]);
    const explanation =
      ticket?.state === 'SEARCHING'
        ? await readTicketExplanation(this.redis, redisKeyPrefix(this.config), ticket.id)
        : undefined;
    sendPage(reply, playerPage(session, { playerId: id, ticket, explanation, matches, rating }));
  }
}
