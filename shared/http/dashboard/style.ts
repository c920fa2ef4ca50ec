/**
 * The dashboard's style sheet: light and dark, one column on a phone (nothing wider than the
 * screen: the lists wrap and the table of clients becomes cards), focus always visible.
 */
export const DASHBOARD_STYLE = `
:root { color-scheme: light dark; --fg: #1d2330; --muted: #5d6675; --bg: #f6f7f9; --card: #fff; --line: #d9dde3; --accent: #2f6fdb; --bad: #c8372d; --good: #1f8a4c; --warn: #b7791f; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8ec; --muted: #9aa3b2; --bg: #14171c; --card: #1d2128; --line: #343a44; --accent: #6ea0ff; --bad: #ff6b60; --good: #4cc383; --warn: #e0a54a; } }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header, main, #message { max-width: 1200px; margin: 0 auto; padding: 12px 16px; }
h1 { font-size: 1.3rem; margin: 4px 0 10px; } h1 span { color: var(--muted); font-weight: 400; }
h2 { font-size: 1.05rem; margin: 22px 0 8px; } h3 { font-size: .95rem; margin: 14px 0 4px; }
form, #controls, .filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
input, select, button { font: inherit; padding: 6px 10px; border-radius: 6px; border: 1px solid var(--line); background: var(--card); color: var(--fg); max-width: 100%; }
input { min-width: 0; flex: 1 1 200px; }
button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
button.secondary { background: var(--card); color: var(--fg); border-color: var(--line); }
button.danger { background: var(--card); color: var(--bad); border-color: var(--bad); }
button[aria-pressed="true"] { background: var(--warn); border-color: var(--warn); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.note, #status, #live-state, #clients-status { color: var(--muted); font-size: .85rem; margin: 0; }
.note { flex-basis: 100%; }
#message { color: var(--bad); font-weight: 600; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: 10px; margin: 0; }
.cards div, .tool-cards li, figure, #calls, #clients { background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
.cards div { padding: 10px 12px; }
.cards dt { color: var(--muted); font-size: .8rem; } .cards dd { margin: 2px 0 0; font-size: 1.35rem; font-weight: 600; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 420px), 1fr)); align-items: start; gap: 12px; margin-top: 18px; }
figure { margin: 0; padding: 10px; min-width: 0; }
figcaption { font-size: .85rem; color: var(--muted); margin-bottom: 6px; }
svg { width: 100%; height: auto; display: block; }
svg text { fill: var(--muted); font-size: 11px; } svg .axis, svg .grid { stroke: var(--line); } svg .grid { stroke-dasharray: 2 3; }
.p50 { color: var(--accent); } .p95, .failures { color: var(--bad); } .p99 { color: var(--warn); } .max, .calls { color: var(--muted); }
svg .range { stroke: var(--line); stroke-width: 3; }
svg circle.p50 { fill: var(--accent); } svg circle.p95 { fill: var(--bad); } svg circle.p99 { fill: var(--warn); } svg circle.max { fill: var(--muted); }
svg .hover { fill: transparent; } svg .bucket:hover .hover { fill: var(--line); opacity: .4; }
svg rect.calls { fill: var(--muted); opacity: .5; } svg rect.failures { fill: var(--bad); }
svg.sparkline { width: 120px; height: 28px; } svg polyline.calls { fill: none; stroke: var(--accent); stroke-width: 1.5; }
.tool-cards { list-style: none; padding: 0; margin: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 260px), 1fr)); gap: 10px; }
.tool-cards li { padding: 10px 12px; min-width: 0; }
.tool-cards h3 { margin: 0 0 4px; overflow-wrap: anywhere; }
.figures { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 6px 0 0; font-size: .85rem; font-variant-numeric: tabular-nums; }
.figures dt { color: var(--muted); } .figures dd { margin: 0; overflow-wrap: anywhere; }
.filters { margin-bottom: 8px; } .filters label { color: var(--muted); font-size: .85rem; }
#calls { list-style: none; margin: 0; padding: 0; }
#calls li + li { border-top: 1px solid var(--line); }
button.call { display: flex; flex-wrap: wrap; gap: 4px 12px; width: 100%; text-align: left; background: none; color: var(--fg); border: 0; border-radius: 0; padding: 8px 12px; font-variant-numeric: tabular-nums; }
button.call:hover { background: var(--bg); }
.call time { color: var(--muted); min-width: 6.5em; } .call .tool { flex: 1 1 10em; font-weight: 600; overflow-wrap: anywhere; }
.call .outcome { min-width: 5em; } .outcome.success { color: var(--good); } .outcome.failure { color: var(--bad); } .outcome.refused { color: var(--warn); }
.call .code { min-width: 9em; overflow-wrap: anywhere; } .call .duration { min-width: 6em; text-align: right; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
thead th { color: var(--muted); font-weight: 600; font-size: .82rem; }
tbody tr:last-child > * { border-bottom: 0; }
dialog { width: min(900px, 96vw); max-height: 90vh; border: 1px solid var(--line); border-radius: 10px; background: var(--card); color: var(--fg); padding: 14px 16px; }
dialog::backdrop { background: rgb(0 0 0 / 45%); }
.dialog-head { display: flex; justify-content: space-between; align-items: center; gap: 8px; } .dialog-head h2 { margin: 0; overflow-wrap: anywhere; }
.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 4px 14px; margin: 10px 0; font-size: .9rem; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; overflow-wrap: anywhere; }
#fields { margin: 0; padding-left: 1.2em; } #fields code { font-weight: 600; } .muted { color: var(--muted); }
pre { background: var(--bg); border: 1px solid var(--line); border-radius: 6px; padding: 8px; overflow: auto; max-height: 16rem; font-size: .8rem; margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
@media (max-width: 640px) {
  body { font-size: 14px; } .cards dd { font-size: 1.15rem; }
  #clients thead { display: none; }
  #clients tr { display: grid; grid-template-columns: 1fr auto; gap: 2px 10px; padding: 8px 10px; border-bottom: 1px solid var(--line); }
  #clients th, #clients td { display: block; padding: 0; border: 0; }
  #clients td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  #clients td:last-child { grid-row: 1; grid-column: 2; }
}
`;
