import type { AllocationRecord } from '@matchplane/allocation';
import type { TicketExplanation } from '@matchplane/contracts';
import {
  isTerminalMatchState,
  type MatchHistoryEvent,
  type MatchSnapshot,
} from '@matchplane/domain';
import type { EventDelivery } from '@matchplane/outbox';
import type { StoredRating } from '@matchplane/players';
import type { StoredTicket } from '@matchplane/tickets';
import { formatInstant, html, queryString, table } from './html';
import { csrfField, page } from './console.layout';
import type { ConsoleSession } from './console-session';

export function lookupPage(options: {
  session: ConsoleSession;
  id?: string;
  error?: string;
}): string {
  return page({
    title: 'Matches & players',
    section: 'lookup',
    session: options.session,
    body: html`<form class="filters" method="get" action="/admin/lookup">
        <label
          >Match, ticket or player id<input
            type="text"
            name="id"
            value="${options.id ?? ''}"
            class="wide"
            placeholder="uuid"
            required
        /></label>
        <button>Look up</button>
      </form>
      ${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}`,
  });
}

export interface MatchView {
  match: MatchSnapshot;
  allocation?: AllocationRecord;
  timeline: readonly MatchHistoryEvent[];
  deliveries: readonly EventDelivery[];
}

/** A live match's cancel form: players not yet in the game search again, the others are let go. */
function cancelForm(session: ConsoleSession, match: MatchSnapshot) {
  if (isTerminalMatchState(match.state)) return '';
  return html`<form class="inline" method="post" action="/admin/matches/${match.id}/cancel">
    ${csrfField(session)}
    <input name="reason" placeholder="reason (required)" required />
    <button class="danger" name="action" value="cancel">Cancel match</button>
  </form>`;
}

export function matchPage(session: ConsoleSession, view: MatchView, notice?: string): string {
  const { match, allocation, timeline } = view;
  const deliveryByRevision = new Map(
    view.deliveries.map((delivery) => [delivery.revision, delivery]),
  );
  const firstRetained = timeline[0] ? Number(timeline[0].revision) : undefined;
  return page({
    title: `Match ${match.id}`,
    section: 'lookup',
    session,
    ...(notice ? { notice } : {}),
    body: html`${cancelForm(session, match)}
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <span class="badge ${match.state}">${match.state}</span> · revision
          ${match.revision}${match.failureReason ? ` · ${match.failureReason}` : ''}
        </dd>
        <dt>Mode</dt>
        <dd>${match.mode}</dd>
        <dt>Region</dt>
        <dd>${match.region}</dd>
        <dt>State changed</dt>
        <dd>${formatInstant(match.stateChangedAt)}</dd>
        <dt>Allocation</dt>
        <dd>
          ${
            allocation
              ? html`${allocation.provider} · server
                  <span class="mono">${allocation.serverId}</span> at
                  <span class="mono">${allocation.endpoint}</span> ·
                  ${allocation.state}${allocation.registeredAt ? ` · registered ${formatInstant(allocation.registeredAt)}` : ''}${allocation.releasedAt ? ` · released ${formatInstant(allocation.releasedAt)}` : ''}`
              : 'none yet'
          }
        </dd>
      </dl>
      <h2>Timeline</h2>
      ${firstRetained !== undefined && firstRetained > 1 ? html`<p class="muted">Revisions before ${firstRetained} were purged by retention.</p>` : ''}
      ${table(
        ['Revision', 'Event', 'State', 'Occurred', 'Delivery'],
        timeline.map((event) => {
          const delivery = deliveryByRevision.get(Number(event.revision));
          return html`<tr>
            <td>${Number(event.revision)}</td>
            <td>${event.event}</td>
            <td>
              ${
                'to' in event.payload
                  ? html`${event.payload.from ?? '—'} →
                      <strong>${event.payload.to}</strong
                      >${event.payload.reason ? ` (${event.payload.reason})` : ''}`
                  : 'presence' in event.payload
                    ? html`${event.payload.presence}: ${event.payload.playerId}`
                    : html`<strong>${event.payload.state}</strong>, backfill added
                        ${event.payload.added.length}`
              }
            </td>
            <td>${formatInstant(event.occurredAt)}</td>
            <td>
              ${delivery ? html`<a href="/admin/dead-letters/${delivery.id}"><span class="badge ${delivery.status}">${delivery.status}</span></a>` : '—'}
            </td>
          </tr>`;
        }),
        { empty: 'No events retained.', className: 'timeline' },
      )}
      <h2>Participants</h2>
      ${table(
        ['Player', 'Ticket', 'Team'],
        match.participants.map(
          (participant) =>
            html`<tr>
              <td>
                <a class="mono" href="/admin/players/${participant.playerId}"
                  >${participant.playerId}</a
                >
              </td>
              <td class="mono">${participant.ticketId}</td>
              <td>${participant.team}</td>
            </tr>`,
        ),
      )}`,
  });
}

export interface PlayerView {
  playerId: string;
  /** Undefined: no such player. */
  rating?: StoredRating;
  ticket?: StoredTicket;
  explanation?: TicketExplanation;
  matches: readonly {
    id: string;
    mode: string;
    region: string;
    state: string;
    stateChangedAt: Date;
  }[];
}

export function playerPage(session: ConsoleSession, view: PlayerView): string {
  const { ticket } = view;
  return page({
    title: `Player ${view.playerId}`,
    section: 'lookup',
    session,
    body: html`<h2>Rating</h2>
      <dl class="facts">
        <dt>Rating</dt>
        <dd data-rating>
          ${
            view.rating
              ? html`<strong>${Math.round(view.rating.rating)}</strong>
                  <span class="muted"
                    >(mu ${view.rating.mu.toFixed(2)}, sigma ${view.rating.sigma.toFixed(2)})</span
                  >
                  ·
                  ${
                    view.rating.updatedAt
                      ? `changed ${view.rating.revision} times, last ${formatInstant(view.rating.updatedAt)}`
                      : 'never rated'
                  }`
              : 'no such player'
          }
        </dd>
      </dl>
      <h2>Live ticket</h2>
      ${
        ticket
          ? html`<dl class="facts">
              <dt>Ticket</dt>
              <dd class="mono">${ticket.id}</dd>
              <dt>State</dt>
              <dd>
                <span class="badge ${ticket.state}">${ticket.state}</span> · revision
                ${ticket.revision}
              </dd>
              <dt>Mode</dt>
              <dd>${ticket.mode}</dd>
              <dt>Queued</dt>
              <dd>
                ${formatInstant(ticket.enqueuedAt)} (last heartbeat
                ${formatInstant(ticket.lastHeartbeatAt)})
              </dd>
              <dt>Predicted RTT</dt>
              <dd>
                ${
                  Object.keys(ticket.predictedRtt).length === 0
                    ? 'no region measured'
                    : Object.entries(ticket.predictedRtt)
                        .map(([region, ms]) => `${region} ${ms} ms`)
                        .join(' · ')
                }
              </dd>
              <dt>Attributes</dt>
              <dd>
                ${
                  Object.keys(ticket.attributes).length === 0
                    ? 'none'
                    : Object.entries(ticket.attributes)
                        .map(([name, value]) => `${name} ${JSON.stringify(value)}`)
                        .join(' · ')
                }
              </dd>
              <dt>Why not matched yet</dt>
              <dd data-explanation>
                ${
                  ticket.state !== 'SEARCHING'
                    ? '— (not searching)'
                    : view.explanation
                      ? html`<strong>${view.explanation.code}</strong>: ${view.explanation.message}
                          <span class="muted"
                            >(matcher pass at ${view.explanation.evaluatedAt})</span
                          >`
                      : 'the matcher has not explained it yet'
                }
              </dd>
              ${
                ticket.matchId
                  ? html`<dt>Match</dt>
                      <dd>
                        <a class="mono" href="/admin/matches/${ticket.matchId}"
                          >${ticket.matchId}</a
                        >
                      </dd>`
                  : ''
              }
            </dl>`
          : html`<p class="muted">No live ticket.</p>`
      }
      <h2>Recent matches</h2>
      ${table(
        ['Match', 'Mode', 'Region', 'State', 'State changed'],
        view.matches.map(
          (match) =>
            html`<tr>
              <td><a class="mono" href="/admin/matches/${match.id}">${match.id}</a></td>
              <td>${match.mode}</td>
              <td>${match.region}</td>
              <td><span class="badge ${match.state}">${match.state}</span></td>
              <td>${formatInstant(match.stateChangedAt)}</td>
            </tr>`,
        ),
        { empty: 'None.' },
      )}
      <p><a href="/admin/lookup${queryString({})}">Look up another id</a></p>`,
  });
}
