/**
 * `GET /dashboard`: one self-contained page, served by the worker, that reads the project's
 * metrics, calls and connected clients through the JSON routes (`/metrics`, `/executions`,
 * `/refusals`, `/grants`) with the API key the person enters. The key stays in the tab's
 * sessionStorage and travels only as a bearer token to this worker: no cookies, so no CSRF
 * surface. The page itself holds no data (it needs no key to load), loads nothing from elsewhere
 * (inline script and style under a per-response CSP nonce), and renders every value as text.
 *
 * Its browser code is the typed module in ./browser/, bundled into ./script.ts by
 * `npm run build:dashboard`.
 */
import { html, raw } from 'hono/html';
import { DASHBOARD_SCRIPT } from './script.ts';
import { DASHBOARD_STYLE } from './style.ts';

/**
 * The dashboard page, with a fresh CSP nonce. Long on purpose: the page's whole markup is one
 * template, read top to bottom as the browser gets it (its style and script live in their own files).
 */
export async function dashboardPage(): Promise<Response> {
  const nonce = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
  const page = await html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>edge-tools · observability</title>
        <style nonce="${nonce}">
          ${raw(DASHBOARD_STYLE)}
        </style>
      </head>
      <body>
        <header>
          <h1>edge-tools <span>observability</span></h1>
          <form id="key-form" hidden>
            <label for="api-key">API key</label>
            <input id="api-key" name="api-key" type="password" autocomplete="off" spellcheck="false" placeholder="et_…" required />
            <button type="submit">Open</button>
            <p class="note">Kept in this tab only (sessionStorage) and sent to this worker's JSON routes as a bearer token.</p>
          </form>
          <div id="controls" hidden>
            <label for="window">Window</label>
            <select id="window">
              <option value="15m">last 15 minutes</option>
              <option value="1h" selected>last hour</option>
              <option value="24h">last 24 hours</option>
              <option value="7d">last 7 days</option>
              <option value="30d">last 30 days</option>
            </select>
            <button id="live" type="button" aria-pressed="false" aria-describedby="live-state">Pause</button>
            <button id="refresh" type="button" class="secondary">Refresh now</button>
            <button id="forget" type="button" class="secondary">Forget key</button>
            <span id="live-state">Live: updates every 5 s.</span>
            <span id="status"></span>
          </div>
        </header>
        <p id="message" role="alert" hidden></p>
        <main id="report" hidden>
          <section aria-labelledby="totals-title">
            <h2 id="totals-title">Totals</h2>
            <dl id="totals" class="cards"></dl>
          </section>
          <section class="charts">
            <figure>
              <figcaption id="latency-title">
                Latency per tool (log scale): <span class="p50">p50</span>, <span class="p95">p95</span>, <span class="p99">p99</span>,
                <span class="max">slowest</span>
              </figcaption>
              <svg id="latency-chart" role="img" aria-labelledby="latency-title"></svg>
            </figure>
            <figure>
              <figcaption id="volume-title">
                Volume over time: <span class="calls">calls</span> and <span class="failures">failures</span>
              </figcaption>
              <svg id="volume-chart" role="img" aria-labelledby="volume-title"></svg>
            </figure>
          </section>
          <section aria-labelledby="tools-title">
            <h2 id="tools-title">Per tool</h2>
            <ul id="tools" class="tool-cards"></ul>
            <p id="no-tools" hidden>No calls in this window.</p>
          </section>
          <section aria-labelledby="calls-title">
            <h2 id="calls-title">Calls</h2>
            <div class="filters">
              <label for="filter-tool">Tool</label>
              <select id="filter-tool">
                <option value="">All tools</option>
              </select>
              <label for="filter-outcome">Outcome</label>
              <select id="filter-outcome">
                <option value="">Any outcome</option>
                <option value="success">success</option>
                <option value="failure">failure</option>
                <option value="refused">refused</option>
              </select>
              <label for="filter-code">Code</label>
              <select id="filter-code">
                <option value="">Any code</option>
              </select>
            </div>
            <ol id="calls" aria-labelledby="calls-title"></ol>
            <p id="no-calls" hidden>No calls match in this window.</p>
          </section>
          <section aria-labelledby="clients-title">
            <h2 id="clients-title">Connected clients</h2>
            <table id="clients" hidden>
              <thead>
                <tr>
                  <th scope="col">Client</th>
                  <th scope="col">Toolsets</th>
                  <th scope="col">Access</th>
                  <th scope="col">Connected</th>
                  <th scope="col"><span class="visually-hidden">Action</span></th>
                </tr>
              </thead>
              <tbody></tbody>
            </table>
            <p id="no-clients" hidden>No client is connected through OAuth.</p>
            <p id="clients-status" role="status"></p>
          </section>
        </main>
        <dialog id="call" aria-labelledby="call-title">
          <div class="dialog-head">
            <h2 id="call-title">Call</h2>
            <button id="close-call" type="button" class="secondary">Close</button>
          </div>
          <dl id="call-facts" class="facts"></dl>
          <section id="fields-section" hidden>
            <h3>Field problems</h3>
            <ul id="fields"></ul>
          </section>
          <section id="call-input">
            <h3>Input</h3>
            <pre></pre>
          </section>
          <section id="call-output">
            <h3>Output</h3>
            <pre></pre>
          </section>
          <section id="call-error">
            <h3>Error</h3>
            <pre></pre>
          </section>
          <section id="call-stack">
            <h3>Stack</h3>
            <pre></pre>
          </section>
          <section id="call-retries">
            <h3>Retries</h3>
            <pre></pre>
          </section>
        </dialog>
        <script nonce="${nonce}">
          ${raw(DASHBOARD_SCRIPT)};
        </script>
      </body>
    </html>`;
  return new Response(page.toString(), {
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    },
  });
}
