import { csrfField, page } from './console.layout';
import type { ConsoleSession } from './console-session';
import { formatInstant, html, table } from './html';
import type { RuleSetView } from '../rule-sets/rule-sets.admin';

/**
 * Rule sets: every version (what it sets over the environment, who made it and why), a form to
 * check or create one, and a form each to activate a version or roll back. The same service as
 * the admin routes does the work.
 */
export function ruleSetsPage(options: {
  session: ConsoleSession;
  ruleSets: readonly RuleSetView[];
  /** What the create form held, shown again after a check. */
  draft?: string;
  notice?: string;
}): string {
  const { session } = options;
  const when = (at: string | undefined) => formatInstant(at ? new Date(at) : null);
  return page({
    title: 'Rule sets',
    section: 'rule-sets',
    session,
    ...(options.notice ? { notice: options.notice } : {}),
    body: html`<p>
        A version sets rule variables over each app's environment (version 1 sets none). The API and
        every matcher switch to the active version within RULE_SET_POLL_INTERVAL_MS; each match
        records the version that formed it.
      </p>
      <form method="post" action="/admin/rule-sets">
        ${csrfField(session)}
        <textarea name="rules" rows="6" cols="80" placeholder='{"MATCH_WIDENING": "0:80:150"}'>
${options.draft ?? ''}</textarea>
        <input name="reason" placeholder="reason (required)" required />
        <button name="action" value="check">Check</button>
        <button name="action" value="create">Create draft</button>
      </form>
      <form class="inline" method="post" action="/admin/rule-sets/rollback">
        ${csrfField(session)}
        <input name="reason" placeholder="reason (required)" required />
        <button>Roll back to the version active before</button>
      </form>
      ${table(
        ['Version', 'Status', 'Rules', 'Why, by whom, when', 'Activate'],
        options.ruleSets.map(
          (ruleSet) =>
            html`<tr data-version="${String(ruleSet.version)}">
              <td>${String(ruleSet.version)}</td>
              <td data-status>${ruleSet.status}</td>
              <td><pre>${JSON.stringify(ruleSet.rules, null, 2)}</pre></td>
              <td>
                ${ruleSet.reason} · ${ruleSet.createdBy} · ${when(ruleSet.createdAt)}
                ${ruleSet.activatedAt ? html` · active since ${when(ruleSet.activatedAt)}` : ''}
              </td>
              <td>
                ${
                  ruleSet.status === 'active'
                    ? ''
                    : html`<form
                        class="inline"
                        method="post"
                        action="/admin/rule-sets/${String(ruleSet.version)}/activate"
                      >
                        ${csrfField(session)}
                        <input name="reason" placeholder="reason (required)" required />
                        <button>Activate</button>
                      </form>`
                }
              </td>
            </tr>`,
        ),
      )}`,
  });
}
