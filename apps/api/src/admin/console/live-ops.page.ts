import { csrfField, page } from './console.layout';
import type { ConsoleSession } from './console-session';
import { formatInstant, html, table } from './html';
import type { QueueControlView } from '../live-ops/queue-controls.admin';

/**
 * Live operations: every configured mode and region with its hold (open, paused, draining), and
 * a form each to pause, drain or resume it. The same service as the admin routes does the work.
 */
export function liveOpsPage(options: {
  session: ConsoleSession;
  targets: readonly QueueControlView[];
  notice?: string;
}): string {
  const { session } = options;
  return page({
    title: 'Live operations',
    section: 'live-ops',
    session,
    ...(options.notice ? { notice: options.notice } : {}),
    body: html`<p>
        A paused mode or region takes no new ticket and matches nothing there; searching tickets
        keep their place. A draining one takes no new ticket and finishes what it holds.
      </p>
      ${table(
        ['Scope', 'Name', 'State', 'Why, by whom, since', 'Change'],
        options.targets.map(
          (target) =>
            html`<tr data-target="${target.scope}/${target.name}">
              <td>${target.scope}</td>
              <td>${target.name}</td>
              <td data-state>${target.state}</td>
              <td>
                ${
                  target.state === 'OPEN'
                    ? ''
                    : html`${target.reason ?? ''} · ${target.setBy ?? ''} ·
                      ${formatInstant(target.setAt ? new Date(target.setAt) : null)}`
                }
              </td>
              <td>
                <form
                  class="inline"
                  method="post"
                  action="/admin/live-ops/${target.scope}/${target.name}"
                >
                  ${csrfField(session)}
                  <input name="reason" placeholder="reason (required)" required />
                  <input
                    name="retryAfterSeconds"
                    placeholder="expected s"
                    inputmode="numeric"
                    size="8"
                  />
                  <button name="action" value="pause">Pause</button>
                  <button name="action" value="drain">Drain</button>
                  <button name="action" value="resume">Resume</button>
                </form>
              </td>
            </tr>`,
        ),
      )}`,
  });
}
