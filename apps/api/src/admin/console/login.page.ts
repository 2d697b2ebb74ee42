import { html } from './html';
import { page } from './console.layout';

export function loginPage(options: { error?: string; configured: boolean }): string {
  return page({
    title: 'Operator login',
    body: html`<section class="login">
      ${options.error ? html`<p class="error" role="alert">${options.error}</p>` : ''}
      ${
        options.configured
          ? html`<form method="post" action="/admin/login">
                <label
                  >Operator token<input
                    type="password"
                    name="token"
                    autocomplete="current-password"
                    required
                    autofocus
                /></label>
                <button>Log in</button>
              </form>
              <p class="muted">
                The token is one of OPERATOR_TOKENS. It is exchanged for a short-lived session
                cookie and never stored by the browser.
              </p>`
          : html`<p class="error">
              No operator tokens are configured (OPERATOR_TOKENS): the console is closed.
            </p>`
      }
    </section>`,
  });
}
