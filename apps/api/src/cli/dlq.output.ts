import type {
  BulkReplayResult,
  DeadLetterDetail,
  DeadLetterPage,
  DiscardedDeadLetter,
  OutboxStats,
  ReplayedDeadLetter,
} from '@matchplane/outbox';

/** The lines one command prints: JSON (one object per line) for scripts, or tables for people. */
export interface DlqRenderer {
  list(page: DeadLetterPage): string[];
  show(detail: DeadLetterDetail): string[];
  replayed(result: ReplayedDeadLetter): string[];
  replayedMatching(result: BulkReplayResult): string[];
  discarded(result: DiscardedDeadLetter): string[];
  stats(stats: OutboxStats): string[];
}

const json = (value: unknown): string => JSON.stringify(value);

/** list prints one line per dead letter, then `{"nextCursor": ...}` when another page follows. */
export const jsonRenderer: DlqRenderer = {
  list: (page) => [
    ...page.items.map(json),
    ...(page.nextCursor ? [json({ nextCursor: page.nextCursor })] : []),
  ],
  show: (detail) => [json(detail)],
  replayed: (result) => [json(result)],
  replayedMatching: (result) => [json(result)],
  discarded: (result) => [json(result)],
  stats: (stats) => [json(stats)],
};

export const tableRenderer: DlqRenderer = {
  list: (page) => [
    ...(page.items.length === 0
      ? ['no dead letters match']
      : table(
          ['ID', 'EVENT', 'AGGREGATE', 'REV', 'ATTEMPTS', 'DEAD-LETTERED AT', 'LAST ERROR'],
          page.items.map((item) => [
            item.id,
            item.event,
            `${item.aggregateType}/${item.aggregateId}`,
            String(item.revision),
            String(item.attempts),
            item.deadLetteredAt.toISOString(),
            clip(item.lastError ?? '', 60),
          ]),
        )),
    ...(page.nextCursor ? ['', `more follow: add --cursor=${page.nextCursor}`] : []),
  ],
  show: (detail) => [
    ...table(
      ['FIELD', 'VALUE'],
      [
        ['id', detail.id],
        ['event', detail.event],
        ['aggregate', `${detail.aggregateType}/${detail.aggregateId}`],
        ['revision', String(detail.revision)],
        ['occurred at', detail.occurredAt.toISOString()],
        ['created at', detail.createdAt.toISOString()],
        ['dead-lettered at', detail.deadLetteredAt.toISOString()],
        ['attempts', String(detail.attempts)],
        ['last error', detail.lastError ?? ''],
        ['players', detail.playerIds.join(', ')],
      ],
    ),
    '',
    'payload:',
    ...JSON.stringify(detail.payload, null, 2)
      .split('\n')
      .map((line) => `  ${line}`),
    '',
    ...(detail.history.length === 0
      ? ['no delivery attempts recorded']
      : [
          'delivery attempts:',
          ...table(
            ['ATTEMPT', 'AT', 'ERROR'],
            detail.history.map((entry) => [
              String(entry.attempt),
              entry.attemptedAt.toISOString(),
              entry.error,
            ]),
          ),
        ]),
  ],
  replayed: (result) => [
    `replayed dead letter ${result.id} (${result.event} ${result.aggregateType}/${result.aggregateId} r${result.revision}): pending again`,
  ],
  replayedMatching: (result) => [
    `replayed ${result.replayed} dead letter${result.replayed === 1 ? '' : 's'}`,
  ],
  discarded: (result) => [
    `discarded dead letter ${result.id} (${result.event} ${result.aggregateType}/${result.aggregateId} r${result.revision}); its envelope is in the audit log`,
  ],
  stats: (stats) => [
    `pending: ${stats.pending.count}` +
      (stats.pending.oldestAgeSeconds === null
        ? ''
        : `, oldest ${stats.pending.oldestAgeSeconds.toFixed(1)} s old`),
    `dead letters: ${stats.deadLetters.count}`,
    ...(stats.deadLetters.byEvent.length === 0
      ? []
      : table(
          ['EVENT', 'DEAD'],
          stats.deadLetters.byEvent.map((row) => [row.event, String(row.count)]),
        ).map((line) => `  ${line}`)),
    `blocked aggregates: ${stats.blockedAggregates.count}, ${stats.blockedAggregates.waitingBehind} event(s) waiting behind them`,
    ...(stats.blockedAggregates.top.length === 0
      ? []
      : table(
          ['AGGREGATE', 'HEAD', 'EVENT', 'REV', 'ATTEMPTS', 'WAITING', 'LAST ERROR'],
          stats.blockedAggregates.top.map((row) => [
            `${row.aggregateType}/${row.aggregateId}`,
            row.headId,
            row.headEvent,
            String(row.headRevision),
            String(row.attempts),
            String(row.waiting),
            clip(row.lastError ?? '', 50),
          ]),
        ).map((line) => `  ${line}`)),
  ],
};

function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)];
}

function clip(text: string, width: number): string {
  const oneLine = text.replace(/\s*\n\s*/g, ' ');
  return oneLine.length <= width ? oneLine : `${oneLine.slice(0, width - 1)}…`;
}
