/** The console's only stylesheet, served at /admin/assets/console.css (the CSP allows no inline style sources beyond 'self'). */
export const CONSOLE_CSS = `
:root {
  --ink: #1d2330; --muted: #5d6778; --line: #dfe3ea; --paper: #f6f7f9; --card: #fff;
  --accent: #2f5bd3; --danger: #b42318; --ok: #1b7f4b; --warn: #a15c00;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
  font-size: 15px; color: var(--ink); background: var(--paper);
}
* { box-sizing: border-box; }
body { margin: 0; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
.top { display: flex; align-items: center; gap: 24px; padding: 0 24px; height: 52px; background: #172036; color: #fff; }
.top .brand { color: #fff; font-weight: 600; white-space: nowrap; }
.top .brand span { color: #9fb0d6; font-weight: 400; }
.top nav { display: flex; gap: 4px; flex: 1; }
.top nav a { color: #c9d3ea; padding: 6px 10px; border-radius: 6px; }
.top nav a[aria-current="page"], .top nav a:hover { background: #26324f; color: #fff; text-decoration: none; }
.top .who { display: flex; align-items: center; gap: 10px; color: #c9d3ea; margin: 0; }
main { max-width: 1180px; margin: 0 auto; padding: 24px; }
h1 { font-size: 22px; margin: 4px 0 18px; }
h2 { font-size: 16px; margin: 28px 0 10px; }
.notice { background: #e8f3ec; border: 1px solid #b9dcc6; color: var(--ok); padding: 10px 14px; border-radius: 8px; }
.error { background: #fdecea; border: 1px solid #f4c2bd; color: var(--danger); padding: 10px 14px; border-radius: 8px; }
.muted { color: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(200px, 1fr)); gap: 14px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; }
.card .label { color: var(--muted); font-size: 13px; }
.card .value { font-size: 26px; font-weight: 600; margin-top: 4px; }
.card .value.bad { color: var(--danger); }
table { width: 100%; border-collapse: collapse; background: var(--card); border: 1px solid var(--line); border-radius: 10px; overflow: hidden; }
th, td { text-align: left; padding: 8px 12px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f6; font-weight: 600; font-size: 13px; color: var(--muted); }
tr:last-child td { border-bottom: 0; }
td.error-text { color: var(--danger); max-width: 380px; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 6px 18px; background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; margin: 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
pre { background: #10182b; color: #dfe7ff; padding: 14px; border-radius: 10px; overflow: auto; max-height: 420px; }
form.filters, form.inline { display: flex; flex-wrap: wrap; gap: 10px; align-items: end; background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; margin-bottom: 16px; }
form.inline { margin: 0; }
label { display: flex; flex-direction: column; gap: 4px; font-size: 13px; color: var(--muted); }
input[type=text], input[type=password], input[type=datetime-local], input:not([type]) { font: inherit; padding: 7px 9px; border: 1px solid #c5ccd8; border-radius: 6px; min-width: 180px; background: #fff; color: var(--ink); }
input.wide { min-width: 340px; }
button { font: inherit; padding: 7px 14px; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); }
button.link { background: none; border: 0; color: #c9d3ea; padding: 0; text-decoration: underline; }
.actions { display: grid; grid-template-columns: 1fr 1fr; gap: 14px; margin-top: 16px; }
.actions h2 { margin-top: 0; }
.pager { display: flex; justify-content: space-between; margin-top: 12px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px; background: #eef1f6; color: var(--muted); }
.badge.COMPLETED, .badge.published { background: #e8f3ec; color: var(--ok); }
.badge.FAILED, .badge.CANCELLED, .badge.dead { background: #fdecea; color: var(--danger); }
.badge.pending, .badge.SEARCHING { background: #fff4e0; color: var(--warn); }
.login { max-width: 420px; margin: 60px auto; background: var(--card); border: 1px solid var(--line); border-radius: 12px; padding: 24px; }
.login form { display: flex; flex-direction: column; gap: 14px; }
.login input { min-width: 0; width: 100%; }
`;
