/** Markup that is already escaped: only {@link html} makes one, so nothing unescaped slips into a page. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Interpolated = SafeHtml | string | number | null | undefined | false | readonly Interpolated[];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

function render(value: Interpolated): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return (value as readonly Interpolated[]).map(render).join('');
  return escapeHtml(String(value));
}

/** A template tag that escapes every interpolated value unless it is itself {@link SafeHtml}. */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** A query string from the fields that are set, for links that keep the current filter. */
export function queryString(fields: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) if (value) params.set(key, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function formatInstant(value: Date | null | undefined): string {
  return value
    ? value
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '—';
}

export function formatSeconds(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5_400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3_600).toFixed(1)} h`;
}

/**
 * A table of `rows` under a header row of `headings`; with `empty`, that line (muted) instead of
 * a table without rows.
 */
export function table(
  headings: readonly string[],
  rows: readonly SafeHtml[],
  options: { empty?: string; className?: string } = {},
): SafeHtml {
  if (rows.length === 0 && options.empty !== undefined) {
    return html`<p class="muted">${options.empty}</p>`;
  }
  return html`<table${options.className ? html` class="${options.className}"` : ''}>
    <thead>
      <tr>
        ${headings.map((heading) => html`<th>${heading}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}
