import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { matcherShardPlan, parseQueueModes, type ServiceConfig } from '@matchplane/config';
import { createRedisConnection, dataSourceOptions } from '@matchplane/persistence';
import { CandidateProjection } from '@matchplane/tickets';

export interface RebuildOutcome {
  applied: number;
  removed: number;
  seconds: number;
}

/**
 * Rebuilds the Redis candidate projection from PostgreSQL, the truth: every searching ticket is
 * written with its current row, index entries of tickets no longer searching are removed. Safe
 * while the API and matchers run (versioned writes keep any newer update).
 */
export async function rebuildCandidates(config: ServiceConfig): Promise<RebuildOutcome> {
  const started = performance.now();
  const dataSource = new DataSource(
    dataSourceOptions(config, { applicationName: 'candidates-cli' }),
  );
  await dataSource.initialize();
  const redis = createRedisConnection(config, new Logger('Redis'), 'candidates-cli');
  try {
    const projection = new CandidateProjection(redis, config, config, matcherShardPlan(config));
    const modes = parseQueueModes(config.QUEUE_MODES).map((mode) => mode.mode);
    const { applied, removed } = await projection.rebuild(dataSource, modes);
    return { applied, removed, seconds: Math.round((performance.now() - started) / 100) / 10 };
  } finally {
    await redis.quit().catch(() => redis.disconnect());
    await dataSource.destroy();
  }
}
