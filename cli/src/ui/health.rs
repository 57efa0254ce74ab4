//! Health: the facts of `memctl status` (store counts and size, pending embeds, telemetry
//! totals) and `memctl doctor` (runtime, model, embedder, hooks installed, the agent's PATH),
//! and two small charts: store growth (turns archived per day, cumulative, from the session
//! records) and tokens injected per day (the telemetry files).

use super::{Shared, UiError, blocking, page};
use axum::extract::State;
use maud::{Markup, html};
use memctl_engine::{TelemetryRecord, human_bytes};
use std::collections::BTreeMap;

/// Days shown by the charts (the most recent ones with data).
const DAYS: usize = 30;

pub(super) async fn page(State(ctx): State<Shared>) -> Result<Markup, UiError> {
    blocking(&ctx, move |c| {
        let st = c.engine.status()?;
        let cfg = &c.settings.autopilot;
        let data_dir = c.engine.options().data_dir.clone();
        let tel = memctl_engine::telemetry_report(&data_dir, 5, cfg).unwrap_or_default();
        // Not the request's fault when these fail: a 500, not the 400 of bad input.
        let internal = |e: anyhow::Error| UiError {
            status: axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("{e:#}"),
        };
        let env = memctl_hooks::install::InstallEnv::current(&c.settings, c.data_dir_flag.as_deref())
            .map_err(internal)?;
        let doctor = crate::doctor::gather(c.engine.options().clone(), &env).map_err(internal)?;
        let growth = growth(c)?;
        let injected = injected_per_day(&data_dir, cfg.chars_per_token.max(0.1));
        Ok(page::layout(
            "Health",
            "health",
            html! {
                h1 { "Health" }
                div.cols {
                    div.grow {
                        h2 { "Store" }
                        table #status {
                            tr { th { "Store file" } td { (c.engine.store_path().display()) } }
                            tr { th { "Size" } td { (human_bytes(st.file_bytes)) } }
                            tr { th { "Projects / sessions / chunks" } td { (st.projects) " / " (st.sessions) " / " (st.chunks) } }
                            tr { th { "Pending embeds" } td.warn[st.pending > 0] { (st.pending) } }
                            @for (emb, n) in &st.vectors { tr { th { "Vectors " (emb) } td { (n) } } }
                            tr { th { "Injected by hooks" } td { (tel.total.calls) " outputs, ~" (tel.total.injected_tokens) " tokens in "
                                (tel.sessions) " sessions; ~" (tel.total.removed_tokens) " tokens of tool output swapped out" } }
                        }
                        h2 { "Store growth (turns archived, cumulative)" }
                        (chart("growth", &growth))
                        h2 { "Tokens injected per day" }
                        (chart("injected", &injected))
                    }
                    div.grow {
                        h2 { "Doctor" }
                        p { @if doctor.ok { span.ok { "ok" } } @else { span.error { (doctor.errors) " error(s)" } }
                            ", " (doctor.warnings) " warning(s) · memctl " (doctor.version) }
                        table #doctor {
                            @for x in &doctor.checks {
                                @let (cls, label) = match x.status {
                                    crate::doctor::Status::Ok => ("ok", "ok"),
                                    crate::doctor::Status::Warn => ("warn", "warn"),
                                    crate::doctor::Status::Error => ("error", "ERROR"),
                                };
                                tr { td class=(cls) { (label) } th { (x.name) } td { (x.detail) } }
                            }
                        }
                    }
                }
            },
        ))
    })
    .await
}

/// `YYYY-MM-DD` of a timestamp.
fn day_of(ts: &str) -> Option<String> {
    ts.parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.strftime("%Y-%m-%d").to_string())
}

/// Turns archived per day (a session's turns counted on its first day), cumulative: from the
/// session records alone (one small table), never a scan of the chunks.
fn growth(c: &super::Ctx) -> Result<Vec<(String, f64)>, UiError> {
    let mut per_day: BTreeMap<String, u64> = BTreeMap::new();
    for (_, s) in c.engine.sessions()? {
        if let Some(d) = s.first_ts.as_deref().and_then(day_of) {
            *per_day.entry(d).or_default() += u64::from(s.turns);
        }
    }
    let mut total = 0u64;
    let all: Vec<(String, f64)> = per_day
        .into_iter()
        .map(|(d, n)| {
            total += n;
            (d, total as f64)
        })
        .collect();
    Ok(all[all.len().saturating_sub(DAYS)..].to_vec())
}

/// Tokens put into the context per day, over every session's telemetry file.
fn injected_per_day(data_dir: &std::path::Path, cpt: f32) -> Vec<(String, f64)> {
    let mut per_day: BTreeMap<String, u64> = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(data_dir.join(memctl_engine::TELEMETRY_DIR)) else {
        return Vec::new();
    };
    for e in entries.flatten() {
        let Ok(log) = memctl_engine::read_telemetry_file(&e.path()) else {
            continue;
        };
        for r in log.records {
            if let TelemetryRecord::Hook(h) = r
                && h.injection.injected_chars > 0
                && let Ok(t) = jiff::Timestamp::from_second(h.at)
            {
                *per_day
                    .entry(t.strftime("%Y-%m-%d").to_string())
                    .or_default() += h.injection.injected_chars;
            }
        }
    }
    let all: Vec<(String, f64)> = per_day
        .into_iter()
        .map(|(d, chars)| (d, (chars as f64 / f64::from(cpt)).round()))
        .collect();
    all[all.len().saturating_sub(DAYS)..].to_vec()
}

/// A bar chart as inline SVG (built by maud like the rest: labels are escaped).
fn chart(id: &str, points: &[(String, f64)]) -> Markup {
    const W: f64 = 560.0;
    const H: f64 = 150.0;
    const PAD: f64 = 24.0;
    if points.is_empty() {
        return html! { p.muted id=(format!("chart-{id}")) { "No data yet." } };
    }
    let max = points.iter().map(|p| p.1).fold(1.0_f64, f64::max);
    let bw = (W - 2.0 * PAD) / points.len() as f64;
    html! {
        svg.chart id=(format!("chart-{id}")) width=(W) height=(H) viewBox=(format!("0 0 {W} {H}")) role="img" {
            title { (id) ": " (points.len()) " days, max " (max) }
            @for (i, (d, v)) in points.iter().enumerate() {
                @let h = (v / max) * (H - 2.0 * PAD);
                rect x=(format!("{:.1}", PAD + i as f64 * bw + 1.0)) y=(format!("{:.1}", H - PAD - h))
                    width=(format!("{:.1}", (bw - 2.0).max(1.0))) height=(format!("{h:.1}")) {
                    title { (d) ": " (v) }
                }
            }
            text x=(PAD) y=(H - 6.0) { (points[0].0) }
            text x=(W - PAD) y=(H - 6.0) text-anchor="end" { (points[points.len() - 1].0) }
            text x=(PAD) y="14" { "max " (max) }
        }
    }
}
