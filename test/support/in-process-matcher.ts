import { randomUUID } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfig } from '@matchplane/config';
import type { TicketResponse } from '@matchplane/contracts';
import { MatcherConfig } from '../../apps/matcher/src/matcher.config';
import { MatcherLoop } from '../../apps/matcher/src/matcher.loop';
import { MatcherModule, type MatcherModuleOptions } from '../../apps/matcher/src/matcher.module';
import type { PlayerApi } from './player-api';
import { freePort } from './processes';

/** The matcher's configuration over `api`'s database and Redis prefix, `env` on top. */
export async function inProcessMatcherConfig(
  api: PlayerApi,
  env: Record<string, string> = {},
): Promise<MatcherConfig> {
  return loadConfig(MatcherConfig, {
    ...api.db.env,
    REDIS_KEY_PREFIX: api.prefix,
    LOG_LEVEL: 'silent',
    HEALTH_HOST: '127.0.0.1',
    HEALTH_PORT: String(await freePort()),
    DATABASE_POOL_SIZE: '4',
    // In process every probe is ~1 ms, but a loaded machine can stretch one past a tight limit.
    MATCH_WIDENING: '0:400:100,10000:1000:200',
    ...env,
  });
}

/**
 * The matcher's real module graph in this process beside `api`, its passes run by the test
 * (`loop.passNow(mode)`) unless `options.schedule` says otherwise. Close `context` before `api`.
 */
export async function startInProcessMatcher(
  api: PlayerApi,
  env: Record<string, string> = {},
  options: MatcherModuleOptions = { schedule: 'manual' },
): Promise<{ context: INestApplicationContext; loop: MatcherLoop }> {
  const context = await NestFactory.createApplicationContext(
    MatcherModule.forRoot(await inProcessMatcherConfig(api, env), options),
    { logger: false, abortOnError: false },
  );
  return { context, loop: context.get(MatcherLoop) };
}

/** Cancels these players' tickets (a 409 for those already matched), emptying `queued`. */
export async function cancelQueued(
  api: PlayerApi,
  queued: { token: string; ticket: TicketResponse }[],
): Promise<void> {
  for (const { token, ticket } of queued.splice(0)) {
    await api.request('DELETE', `/v1/queue/tickets/${ticket.id}`, {
      token,
      idempotencyKey: randomUUID(),
    });
  }
}
