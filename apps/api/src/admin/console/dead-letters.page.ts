import type { DeadLetterPage, OutboxEventDetail } from '@matchplane/outbox';
import type { AuditRecord } from '@matchplane/persistence';
import { formatInstant, html, queryString, table, type SafeHtml } from './html';
import { csrfField, page } from './console.layout';
import type { ConsoleSession } from './console-session';

/** The list's filter as typed in the form (strings, possibly invalid: the page shows them back). */
export interface DeadLetterFilterForm {
  event?: string;
  aggregateId?: string;
  from?: string;
  to?: string;
}

function filterFields(filter: DeadLetterFilterForm): SafeHtml {
  return html`${(Object.entries(filter) as [string, string | undefined][]).map(([name, value]) =>
    value ? html`<input type="hidden" name="${name}" value="${value}" />` : '',
  )}`;
}

export function deadLetterListPage(options: {
  session: ConsoleSession;
  filter: DeadLetterFilterForm;
  result?: DeadLetterPage;
  error?: string;
  cursor?: string;
  notice?: string;
}): string {
  const { session, filter, result } = options;
  const filtered = Object.values(filter).some(Boolean);
  return page({
    title: 'Dead letters',
    section: 'dead-letters',
    session,
    notice: options.notice,
    body: html`<form class="filters" method="get" action="/admin/dead-letters">
        <label
          >Event<input
            type="text"
            name="event"
            value="${filter.event ?? ''}"
            placeholder="match.state_changed"
        /></label>
        <label
          >Aggregate id<input
            type="text"
            name="aggregateId"
            value="${filter.aggregateId ?? ''}"
            placeholder="uuid"
            class="wide"
        /></label>
        <label
          >From<input
            type="text"
            name="from"
            value="${filter.from ?? ''}"
            placeholder="2026-01-31T12:00Z"
        /></label>
        <label
          >To<input
            type="text"
            name="to"
            value="${filter.to ?? ''}"
            placeholder="2026-01-31T13:00Z"
        /></label>
        <button>Filter</button>
        ${filtered ? html`<a href="/admin/dead-letters">Clear</a>` : ''}
      </form>
      ${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
      ${
        !result
          ? ''
          : result.items.length === 0
            ? html`<p class="muted">No dead letters${filtered ? ' match this filter' : ''}.</p>`
            : html`${table(
                  [
                    'Id',
                    'Event',
                    'Aggregate',
                    'Revision',
                    'Attempts',
                    'Last error',
                    'Dead-lettered',
                  ],
                  result.items.map(
                    (item) =>
                      html`<tr>
                        <td><a href="/admin/dead-letters/${item.id}">#${item.id}</a></td>
                        <td>${item.event}</td>
                        <td>
                          ${item.aggregateType}
                          <a
                            class="mono"
                            href="/admin/lookup${queryString({ id: item.aggregateId })}"
                            >${item.aggregateId}</a
                          >
                        </td>
                        <td>${item.revision}</td>
                        <td>${item.attempts}</td>
                        <td class="error-text">${item.lastError ?? '—'}</td>
                        <td>${formatInstant(item.deadLetteredAt)}</td>
                      </tr>`,
                  ),
                )}
                <div class="pager">
                  <span
                    >${options.cursor ? html`<a href="/admin/dead-letters${queryString({ ...filter })}">« First page</a>` : ''}</span
                  >
                  <span
                    >${result.nextCursor ? html`<a rel="next" href="/admin/dead-letters${queryString({ ...filter, cursor: result.nextCursor })}">Next page »</a>` : ''}</span
                  >
                </div>
                <h2>
                  Replay
                  ${filtered ? 'every dead letter matching this filter' : 'every dead letter'}
                </h2>
                <form class="inline" method="post" action="/admin/dead-letters/replay">
                  ${csrfField(session)}${filterFields(filter)}
                  <label
                    >Reason (for the audit trail)<input
                      type="text"
                      name="reason"
                      required
                      class="wide"
                  /></label>
                  <button>Replay all${filtered ? ' matching' : ''}</button>
                </form>`
      }`,
  });
}

export function auditTable(entries: readonly AuditRecord[]): SafeHtml {
  return table(
    ['When', 'Operator', 'Action', 'Target', 'Reason'],
    entries.map(
      (entry) =>
        html`<tr>
          <td>${formatInstant(entry.createdAt)}</td>
          <td>${entry.actor}</td>
          <td>${entry.action}</td>
          <td>
            ${entry.targetType === 'outbox' ? html`<a href="/admin/dead-letters/${entry.targetId}">#${entry.targetId}</a>` : `${entry.targetType} ${entry.targetId}`}
          </td>
          <td>${entry.reason ?? '—'}</td>
        </tr>`,
    ),
    { empty: 'No audit entries.', className: 'audit' },
  );
}

export function deadLetterDetailPage(options: {
  session: ConsoleSession;
  event: OutboxEventDetail;
  audit: readonly AuditRecord[];
  notice?: string;
}): string {
  const { session, event } = options;
  const envelope = {
    id: event.id,
    event: event.event,
    aggregateType: event.aggregateType,
    aggregateId: event.aggregateId,
    revision: event.revision,
    occurredAt: event.occurredAt,
    playerIds: event.playerIds,
    payload: event.payload,
  };
  return page({
    title: `Outbox event #${event.id}`,
    section: 'dead-letters',
    session,
    notice: options.notice,
    body: html`<dl class="facts">
        <dt>Status</dt>
        <dd>
          <span class="badge ${event.status}" data-status="${event.status}">${event.status}</span>
        </dd>
        <dt>Event</dt>
        <dd>${event.event}</dd>
        <dt>Aggregate</dt>
        <dd>
          ${event.aggregateType}
          <a class="mono" href="/admin/lookup${queryString({ id: event.aggregateId })}"
            >${event.aggregateId}</a
          >
          · revision ${event.revision}
        </dd>
        <dt>Written</dt>
        <dd>${formatInstant(event.createdAt)}</dd>
        <dt>Attempts</dt>
        <dd>${event.attempts}</dd>
        <dt>Last error</dt>
        <dd class="error-text">${event.lastError ?? '—'}</dd>
        <dt>Dead-lettered</dt>
        <dd>${formatInstant(event.deadLetteredAt)}</dd>
        <dt>Delivered</dt>
        <dd>${formatInstant(event.publishedAt)}</dd>
      </dl>
      ${
        event.status === 'dead'
          ? html`<div class="actions">
              <form class="inline" method="post" action="/admin/dead-letters/${event.id}/replay">
                <h2>Replay</h2>
                ${csrfField(session)}
                <label>Reason (optional)<input type="text" name="reason" /></label>
                <button>Replay</button>
              </form>
              <form class="inline" method="post" action="/admin/dead-letters/${event.id}/discard">
                <h2>Discard</h2>
                ${csrfField(session)}
                <label>Reason (required)<input type="text" name="reason" required /></label>
                <button class="danger">Discard</button>
              </form>
            </div>`
          : ''
      }
      <h2>Envelope</h2>
      <pre>${JSON.stringify(envelope, null, 2)}</pre>
      <h2>Attempt history</h2>
      ${table(
        ['Attempt', 'When', 'Error'],
        event.history.map(
          (attempt) =>
            html`<tr>
              <td>${attempt.attempt}</td>
              <td>${formatInstant(attempt.attemptedAt)}</td>
              <td class="error-text">${attempt.error}</td>
            </tr>`,
        ),
        { empty: 'No failed attempts recorded.' },
      )}
      <h2>Audit trail of this event</h2>
      ${auditTable(options.audit)}`,
  });
}

export function auditPage(options: {
  session: ConsoleSession;
  entries: readonly AuditRecord[];
  nextBefore?: string;
  notice?: string;
}): string {
  return page({
    title: 'Audit trail',
    section: 'audit',
    session: options.session,
    notice: options.notice,
    body: html`${auditTable(options.entries)}
      <div class="pager">
        <span><a href="/admin/audit">« Newest</a></span
        ><span
          >${
            options.nextBefore
              ? html`<a rel="next" href="/admin/audit${queryString({ before: options.nextBefore })}"
                  >Older »</a
                >`
              : ''
          }</span
        >
      </div>`,
  });
}
