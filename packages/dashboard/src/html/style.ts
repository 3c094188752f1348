/** The dashboard's one stylesheet (inline, no external fonts or files). */
export const STYLE = `
:root { --fg: #1d232b; --muted: #5c6673; --line: #d9dee5; --bg: #f6f7f9; --card: #fff; --accent: #2457c5; --bad: #b3261e; --ok: #1e7b34; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
nav { display: flex; gap: 18px; align-items: center; padding: 10px 20px; background: #17202b; }
nav a, nav button { color: #dce3ec; text-decoration: none; background: none; border: 0; font: inherit; cursor: pointer; }
nav .brand { font-weight: 700; color: #fff; }
.grow { flex: 1; }
main { padding: 16px 20px 40px; }
h1 { font-size: 20px; margin: 4px 0 14px; } h2 { font-size: 16px; margin: 22px 0 8px; }
.banner { background: var(--bad); color: #fff; padding: 8px 20px; font-weight: 600; }
.notice { background: #e7f0ff; border: 1px solid #b9cdf5; padding: 8px 12px; border-radius: 6px; margin: 8px 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; margin: 10px 0; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
a { color: var(--accent); }
pre { margin: 0; white-space: pre-wrap; word-break: break-all; font: 12px/1.4 ui-monospace, "SFMono-Regular", Menlo, monospace; }
.muted { color: var(--muted); } .bad { color: var(--bad); } .ok { color: var(--ok); }
.tabs a { margin-right: 12px; } .tabs a.on { font-weight: 700; color: var(--fg); text-decoration: none; }
.pager { margin: 10px 0; display: flex; gap: 14px; }
form.inline { display: inline; margin: 0; }
button, input { font: inherit; } input[type=text], input[type=password] { padding: 4px 6px; border: 1px solid var(--line); border-radius: 4px; }
.card button, main form button { padding: 4px 10px; border: 1px solid var(--line); border-radius: 4px; background: #fff; cursor: pointer; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; } dt { color: var(--muted); }
.controls { margin: 14px 0; } form.selection { margin: 0 0 8px; } .pick-count { font-weight: 600; margin-right: 8px; }
.confirm-question { font-weight: 600; } main form button.danger { border-color: var(--bad); color: var(--bad); }
svg.flow { background: #fff; border: 1px solid var(--line); border-radius: 8px; }
svg.flow text { font: 12px system-ui, sans-serif; fill: var(--fg); }
svg.flow .key rect { fill: #eef3fb; stroke: #8aa5d6; } svg.flow .job rect { fill: #fdf3e3; stroke: #d6a55a; }
svg.flow .focus rect { stroke: var(--bad); stroke-width: 2; }
svg.flow .edges path { fill: none; stroke: #9aa6b5; stroke-width: 1.2; }
svg.flow a:hover rect { stroke-width: 2; }
`;
