import type { FastifyReply } from 'fastify';
import { html, queryString, type SafeHtml } from './html';
import { CSRF_FIELD } from './console.guard';
import type { ConsoleSession } from './console-session';

export type ConsoleSection =
  'outbox' | 'dead-letters' | 'audit' | 'lookup' | 'live-ops' | 'rule-sets' | 'queues';

const SECTIONS: { id: ConsoleSection; href: string; label: string }[] = [
  { id: 'outbox', href: '/admin', label: 'Outbox' },
  { id: 'dead-letters', href: '/admin/dead-letters', label: 'Dead letters' },
  { id: 'audit', href: '/admin/audit', label: 'Audit trail' },
  { id: 'lookup', href: '/admin/lookup', label: 'Matches & players' },
  { id: 'live-ops', href: '/admin/live-ops', label: 'Live ops' },
  { id: 'rule-sets', href: '/admin/rule-sets', label: 'Rule sets' },
  { id: 'queues', href: '/admin/queues', label: 'Queues' },
];

export interface PageOptions {
  title: string;
  section?: ConsoleSection;
  session?: ConsoleSession;
  /** A one-line outcome of the last action (after a redirect). */
  notice?: string;
  body: SafeHtml;
}

/** The hidden field that carries the session's CSRF token in every console form. */
export function csrfField(session: ConsoleSession): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}" />`;
}

/** Every console page: no script, one stylesheet served by the API itself. */
export function page(options: PageOptions): string {
  const { session } = options;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${options.title} · Matchplane operator console</title>
        <link rel="stylesheet" href="/admin/assets/console.css" />
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/admin">Matchplane <span>operator console</span></a>
          ${
            session
              ? html`<nav>
                    ${SECTIONS.map(
                      (section) =>
                        html`<a
                          href="${section.href}"
                          ${section.id === options.section ? html` aria-current="page"` : ''}
                          >${section.label}</a
                        >`,
                    )}
                  </nav>
                  <form class="who" method="post" action="/admin/logout">
                    ${csrfField(session)}<span>${session.operator}</span
                    ><button class="link">Log out</button>
                  </form>`
              : ''
          }
        </header>
        <main>
          <h1>${options.title}</h1>
          ${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
          ${options.body}
        </main>
      </body>
    </html> `.value;
}

/** Answers a console page: HTML, never cached (it shows live state and carries the CSRF token). */
export function sendPage(reply: FastifyReply, body: string, status = 200): void {
  void reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(body);
}

/** After a form: back to a page, with a one-line outcome (post/redirect/get, so a reload repeats nothing). */
export function seeOther(reply: FastifyReply, path: string, notice?: string): void {
  const separator = path.includes('?') ? '&' : '?';
  const location = notice ? `${path}${separator}${queryString({ notice }).slice(1)}` : path;
  void reply.status(303).header('location', location).send();
}
