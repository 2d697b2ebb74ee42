import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { CliExitCode, CodedError, exitCodeOf, LibraryErrorCode } from '@matchplane/errors';
import { DeadLetterService, OutboxStatsService } from '@matchplane/outbox';
import { dataSourceOptions, messageOf, sqlStateOf } from '@matchplane/persistence';
import { isAudited, type AuditedDlqOperation, type DlqOperation } from './dlq-args.parser';
import type { DlqConfig } from './dlq.config';
import { DlqModule } from './dlq.module';
import type { DlqRenderer } from './dlq.output';

export interface DlqOutput {
  line(text: string): void;
  error(text: string): void;
}

/** An operation whose actor, if it needs one, is resolved (--actor, else OPERATOR_NAME). */
export type ResolvedDlqOperation =
  Exclude<DlqOperation, AuditedDlqOperation> | (AuditedDlqOperation & { actor: string });

/** Gives an audited operation its actor: --actor, else OPERATOR_NAME; undefined when neither is set. */
export function withActor(
  operation: DlqOperation,
  fallback: string | undefined,
): ResolvedDlqOperation | undefined {
  if (!isAudited(operation)) return operation;
  const actor = operation.actor ?? fallback;
  return actor === undefined ? undefined : { ...operation, actor };
}

/** Runs one operation to completion; resolves with the exit code (libs/errors CLI_EXIT_CODES). */
export async function runDlqCommand(
  operation: ResolvedDlqOperation,
  config: DlqConfig,
  render: DlqRenderer,
  output: DlqOutput,
): Promise<number> {
  const target = `${config.DATABASE_HOST}:${config.DATABASE_PORT}/${config.DATABASE_NAME}`;
  // One-shot: an unreachable database is reported at once (the caller may retry), not waited for.
  const dataSource = new DataSource(
    dataSourceOptions({ ...config, DATABASE_POOL_SIZE: 2 }, { applicationName: 'matchplane-dlq' }),
  );
  try {
    await dataSource.initialize();
  } catch (error) {
    const unreachable = new CodedError(
      LibraryErrorCode.DATABASE_UNREACHABLE,
      `cannot connect to PostgreSQL at ${target}: ${messageOf(error)}`,
    );
    output.error(unreachable.message);
    return exitCodeOf(unreachable);
  }
  try {
    const app = await NestFactory.createApplicationContext(DlqModule.forRoot(config, dataSource), {
      logger: false,
      abortOnError: false,
    });
    try {
      for (const line of await execute(
        operation,
        app.get(DeadLetterService),
        app.get(OutboxStatsService),
        render,
      )) {
        output.line(line);
      }
      return CliExitCode.OK;
    } finally {
      await app.close();
    }
  } catch (error) {
    output.error(
      error instanceof CodedError ? error.message : `failed on ${target}: ${describe(error)}`,
    );
    return exitCodeOf(error);
  } finally {
    await dataSource.destroy().catch(() => undefined);
  }
}

async function execute(
  operation: ResolvedDlqOperation,
  deadLetters: DeadLetterService,
  stats: OutboxStatsService,
  render: DlqRenderer,
): Promise<string[]> {
  switch (operation.kind) {
    case 'list':
      return render.list(
        await deadLetters.list(operation.filter, operation.cursor, operation.limit),
      );
    case 'show':
      return render.show(await deadLetters.show(operation.id));
    case 'replay':
      return render.replayed(
        await deadLetters.replay(operation.id, operation.actor, operation.reason),
      );
    case 'replay-matching':
      return render.replayedMatching(
        await deadLetters.replayMatching(
          { ...operation.filter, all: operation.all },
          operation.actor,
          operation.reason,
        ),
      );
    case 'discard':
      return render.discarded(
        await deadLetters.discard(operation.id, operation.actor, operation.reason),
      );
    case 'stats':
      return render.stats(await stats.stats());
  }
}

function describe(error: unknown): string {
  // 42P01 undefined_table: most likely a database the migrations never ran on.
  const hint =
    sqlStateOf(error) === '42P01' ? ' (are the migrations applied? npm run migrate)' : '';
  return `${messageOf(error)}${hint}`;
}
