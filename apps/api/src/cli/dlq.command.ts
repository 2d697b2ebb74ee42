import { DeadLetterService, OutboxStatsService } from '@matchplane/outbox';
import { runCliCommand, type CliOutput } from './cli-context';
import { isAudited, type AuditedDlqOperation, type DlqOperation } from './dlq-args.parser';
import type { DlqConfig } from './dlq.config';
import { DlqModule } from './dlq.module';
import type { DlqRenderer } from './dlq.output';

export type DlqOutput = CliOutput;

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
export function runDlqCommand(
  operation: ResolvedDlqOperation,
  config: DlqConfig,
  render: DlqRenderer,
  output: DlqOutput,
): Promise<number> {
  return runCliCommand(
    config,
    'matchplane-dlq',
    (dataSource) => DlqModule.forRoot(config, dataSource),
    (app) => execute(operation, app.get(DeadLetterService), app.get(OutboxStatsService), render),
    output,
  );
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
