import type { OutboxStats } from '@matchplane/outbox';
import { formatInstant, formatSeconds, html, queryString, table } from './html';
import { page } from './console.layout';
import type { ConsoleSession } from './console-session';

export interface DeliveryRate {
  lastMinute: number;
  lastFifteenMinutes: number;
}

export function outboxPage(
  session: ConsoleSession,
  stats: OutboxStats,
  rate: DeliveryRate,
): string {
  const { pending, deadLetters, blockedAggregates } = stats;
  return page({
    title: 'Outbox at a glance',
    section: 'outbox',
    session,
    body: html`<div class="cards">
        <div class="card">
          <div class="label">Pending</div>
          <div class="value" data-metric="pending">${pending.count}</div>
        </div>
        <div class="card">
          <div class="label">Oldest pending</div>
          <div class="value">${formatSeconds(pending.oldestAgeSeconds)}</div>
        </div>
        <div class="card">
          <div class="label">Blocked aggregates</div>
          <div class="value${blockedAggregates.count > 0 ? ' bad' : ''}">
            ${blockedAggregates.count}
          </div>
          <div class="label">${blockedAggregates.waitingBehind} events waiting behind them</div>
        </div>
        <div class="card">
          <div class="label">Dead letters</div>
          <div class="value${deadLetters.count > 0 ? ' bad' : ''}" data-metric="dead">
            ${deadLetters.count}
          </div>
        </div>
        <div class="card">
          <div class="label">Delivered, last minute</div>
          <div class="value" data-metric="delivered">${rate.lastMinute}</div>
          <div class="label">
            ${(rate.lastMinute / 60).toFixed(1)}/s · ${rate.lastFifteenMinutes} in 15 min
          </div>
        </div>
      </div>
      <h2>Blocked aggregates</h2>
      ${table(
        ['Aggregate', 'Failing head', 'Attempts', 'Last error', 'Next attempt', 'Waiting behind'],
        blockedAggregates.top.map(
          (blocked) =>
            html`<tr>
              <td>
                ${blocked.aggregateType}
                <a class="mono" href="/admin/lookup${queryString({ id: blocked.aggregateId })}"
                  >${blocked.aggregateId}</a
                >
              </td>
              <td>
                <a href="/admin/dead-letters/${blocked.headId}">#${blocked.headId}</a>
                ${blocked.headEvent} r${blocked.headRevision}
              </td>
              <td>${blocked.attempts}</td>
              <td class="error-text">${blocked.lastError ?? '—'}</td>
              <td>${formatInstant(blocked.nextAttemptAt)}</td>
              <td>${blocked.waiting}</td>
            </tr>`,
        ),
        { empty: "None: every aggregate's next event is on its first attempt or delivered." },
      )}
      <h2>Dead letters by event</h2>
      ${table(
        ['Event', 'Dead letters'],
        deadLetters.byEvent.map(
          (row) =>
            html`<tr>
              <td>
                <a href="/admin/dead-letters${queryString({ event: row.event })}">${row.event}</a>
              </td>
              <td>${row.count}</td>
            </tr>`,
        ),
        { empty: 'No dead letters.' },
      )}`,
  });
}
