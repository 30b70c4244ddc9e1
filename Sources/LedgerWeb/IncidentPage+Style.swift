extension IncidentPage {
    /// The view's stylesheet (served as `/assets/incident.css`, inlined in reports).
    public static let stylesheet = #"""
/* ActivityLedger incident view. Text colours meet WCAG AA contrast on their backgrounds. */
:root { color-scheme: light; --ink: #1b1f24; --muted: #4a5360; --line: #c9d1da; --bg: #ffffff; --panel: #f4f6f8; --focus: #0b57d0; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
header { display: flex; flex-wrap: wrap; gap: 12px 24px; align-items: center; padding: 10px 20px; background: #12263f; color: #fff; }
header a, header .brand { color: #fff; font-weight: 600; text-decoration: none; }
#tools { display: flex; flex-wrap: wrap; gap: 8px 20px; align-items: center; }
#tools form { display: flex; gap: 6px; align-items: center; }
#key-state { font-size: 13px; color: #dfe7f1; }
main { padding: 12px 20px 40px; max-width: 1280px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 17px; margin: 16px 0 8px; }
h3 { font-size: 14px; margin: 12px 0 4px; color: var(--muted); }
.summary { color: var(--muted); margin: 0 0 6px; }
input, select, button { font: inherit; padding: 4px 8px; border: 1px solid #8a96a3; border-radius: 4px; background: #fff; color: var(--ink); }
button { cursor: pointer; background: #e8edf3; }
button:disabled { cursor: default; color: #6b7480; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
#status { min-height: 1.4em; padding: 0 20px; }
#status.error, .missing { color: #a4161a; }
.mono, pre, code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; word-break: break-all; }
figure.axis { margin: 8px 0; }
#axis { width: 100%; height: auto; border: 1px solid var(--line); background: #fbfcfd; }
.band { opacity: 0.55; }
.phase-pending { fill: #d7d2f5; background: #d7d2f5; }
.phase-active { fill: #c6ecd1; background: #c6ecd1; }
.phase-stale { fill: #fbe7a6; background: #fbe7a6; }
.phase-ended { fill: #f6c9c1; background: #f6c9c1; }
.phase-dismissed { fill: #d5d9de; background: #d5d9de; }
.band-label, .lane-label, .tick { font-size: 11px; fill: #2d3540; }
.mark { stroke: #1b1f24; stroke-width: 0.6; }
circle.type-request { fill: #1f6feb; } circle.type-update { fill: #0969da; } circle.type-end { fill: #6639ba; }
circle.type-push { fill: #9a6700; } circle.type-observe { fill: #1a7f37; } circle.type-dismiss { fill: #57606a; }
circle.type-token, circle.type-startToken { fill: #bf3989; } circle.type-subscribe, circle.type-reconcile { fill: #8c959f; }
text.mark { font-size: 15px; stroke: none; font-weight: 700; }
.v-applied { color: #116329; fill: #116329; } .v-accepted { color: #0a4fa3; fill: #0a4fa3; }
.v-superseded { color: #6e5600; fill: #6e5600; } .v-rejected { color: #a4161a; fill: #a4161a; }
.v-lost { color: #8a2c0d; fill: #8a2c0d; } .v-pending { color: #4a5360; fill: #4a5360; }
.cursor { stroke: #d1242f; stroke-width: 2; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 14px; font-size: 13px; margin-top: 4px; }
.legend .swatch { padding: 0 6px; border: 1px solid var(--line); }
.slider-row { display: flex; flex-wrap: wrap; gap: 10px; align-items: center; margin: 10px 0; }
#slider { flex: 1 1 420px; }
#slider-time { font-family: ui-monospace, Menlo, monospace; min-width: 24ch; }
.columns { display: grid; grid-template-columns: minmax(320px, 440px) 1fr; gap: 20px; align-items: start; }
@media (max-width: 900px) { .columns { grid-template-columns: 1fr; } }
.card { background: #101418; color: #f5f7fa; border-radius: 18px; padding: 12px 18px 16px; }
.card h2 { margin-top: 4px; color: #fff; } .card h3 { color: #c9d3de; }
.card .card-asof { color: #c9d3de; margin: 0; font-size: 13px; }
.card .missing { color: #ffb3ad; }
.card dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 8px 0; }
.card dt { color: #c9d3de; } .card dd { margin: 0; word-break: break-all; }
.card table.kv th, .card table.kv td { border-color: #3b4450; color: #f5f7fa; }
.card .json-link { background: #2b333d; color: #fff; border-color: #5c6774; margin-top: 8px; }
.card pre.json { color: #f5f7fa; background: #1d242c; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; border-bottom: 1px solid var(--line); padding: 3px 8px; vertical-align: top; }
table.kv td { font-family: ui-monospace, Menlo, monospace; font-size: 13px; }
td.dead { color: #a4161a; font-weight: 600; }
.verdict { font-weight: 600; white-space: nowrap; }
pre.json { max-height: 360px; overflow: auto; background: var(--panel); padding: 8px; border: 1px solid var(--line); white-space: pre-wrap; }
.json-link { font-size: 13px; padding: 2px 8px; }
.links { display: flex; flex-wrap: wrap; gap: 6px; }
.json-box { display: inline-block; max-width: 100%; }
ul.results { padding-left: 18px; }
.report-note { font-size: 13px; color: #dfe7f1; }
"""#
}
