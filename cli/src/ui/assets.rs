//! The page's one stylesheet and one script, served from the binary (no CDN: the viewer works
//! offline, and the CSP allows only these two files).

use axum::http::header;
use axum::response::IntoResponse;

const CSS: &str = r#"
:root { --fg:#1d232a; --muted:#5d6b78; --line:#d9dee3; --bg:#f7f8fa; --accent:#2458c6; --warn:#a15c00; --bad:#b42318; --ok:#157f3b; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
header { display:flex; gap:1.5em; align-items:center; padding:.6em 1.2em; background:#fff; border-bottom:1px solid var(--line); position:sticky; top:0; z-index:2; }
.brand { font-weight:700; }
nav a { margin-right:1em; color:var(--muted); text-decoration:none; }
nav a.active { color:var(--fg); font-weight:600; border-bottom:2px solid var(--accent); }
form.quick { margin-left:auto; }
main { padding:1em 1.2em 3em; max-width:1200px; }
a { color:var(--accent); }
h1 { font-size:1.35em; margin:.3em 0 .6em; } h2 { font-size:1.1em; margin:1.4em 0 .5em; }
table { border-collapse:collapse; width:100%; background:#fff; }
th, td { text-align:left; padding:.35em .6em; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:600; font-size:.92em; }
.muted { color:var(--muted); } .error { color:var(--bad); } .warn { color:var(--warn); } .ok { color:var(--ok); }
.cols { display:flex; gap:1.5em; align-items:flex-start; } .side { min-width:240px; max-width:320px; }
.side ul { list-style:none; padding:0; margin:0; } .side li { padding:.25em 0; border-bottom:1px solid var(--line); }
.grow { flex:1; min-width:0; }
.turn { background:#fff; border:1px solid var(--line); border-radius:6px; padding:.6em .8em; margin:.5em 0; }
.turn.compact { border-left:4px solid var(--warn); }
.turn:target { outline:2px solid var(--accent); }
.turn .meta { color:var(--muted); font-size:.9em; }
.badge { display:inline-block; font-size:.8em; padding:0 .45em; border-radius:9px; background:#e8edf5; margin-right:.3em; }
.badge.fold { background:#efe7fb; color:#5b2fa0; font-weight:600; }
details.copies { margin:.3em 0; font-size:.92em; } details.copies summary { cursor:pointer; color:var(--muted); }
details.copies ul { margin:.3em 0 .3em 1.2em; padding:0; }
.badge.err { background:#fde7e4; color:var(--bad); } .badge.pin { background:#e5f4ea; color:var(--ok); } .badge.cmp { background:#fff1dc; color:var(--warn); }
.inject { background:#fff8e6; border:1px dashed var(--warn); border-radius:6px; padding:.35em .8em; margin:.5em 0; font-size:.92em; }
pre { white-space:pre-wrap; word-break:break-word; background:#f3f5f7; padding:.6em; border-radius:4px; max-height:40em; overflow:auto; }
mark { background:#ffe58a; }
.hit { background:#fff; border:1px solid var(--line); border-radius:6px; padding:.6em .8em; margin:.5em 0; }
.scores { font-family:ui-monospace, monospace; font-size:.88em; color:var(--muted); }
form.filters { display:flex; flex-wrap:wrap; gap:.5em; align-items:end; margin-bottom:1em; }
form.filters label { display:flex; flex-direction:column; font-size:.85em; color:var(--muted); }
form.inline { display:inline; }
button { cursor:pointer; }
button.danger { background:var(--bad); color:#fff; border:0; padding:.4em .9em; border-radius:4px; }
table.lines td.n { color:var(--muted); text-align:right; user-select:none; width:1%; white-space:nowrap; font-family:ui-monospace, monospace; }
table.lines td.l { font-family:ui-monospace, monospace; white-space:pre-wrap; word-break:break-word; padding:0 .6em; border:0; }
table.lines td { border:0; padding:0 .4em; }
textarea { width:100%; min-height:24em; font-family:ui-monospace, monospace; }
.pager { margin:1em 0; }
.card { background:#fff; border:1px solid var(--line); border-radius:6px; padding:.6em .9em; margin:.5em 0; }
svg.chart { background:#fff; border:1px solid var(--line); border-radius:6px; }
svg.chart rect { fill:var(--accent); } svg.chart text { font-size:10px; fill:var(--muted); }
"#;

/// Every `<form data-confirm="...">` asks before it submits; nothing else runs.
const JS: &str = r#"
document.addEventListener('submit', function (ev) {
  var f = ev.target;
  var q = f && f.getAttribute && f.getAttribute('data-confirm');
  if (q && !window.confirm(q)) { ev.preventDefault(); }
}, true);
"#;

pub(super) async fn css() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], CSS)
}

pub(super) async fn js() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        JS,
    )
}
