//! The fold thresholds swept on a labelled archive: every pair of chunks of the archive of
//! `scripts/gen_dups.py` (ingested with the model), labelled by its groups, and for each
//! threshold pair (word 3-gram Jaccard of the masked texts, cosine of the model vectors) the
//! near-copy pairs folded (recall) and the pairs folded that must not be (wrong folds, of them
//! hard negatives).
//!
//! usage: `MEMCTL_HOME=<home> cargo run --release -p memctl-engine --example fold_sweep --
//! <labels.json>` (`scripts/bench_dups.py --sweep` runs it on its archive).
//!
//! A pair is positive when both chunks' turns hold the same group's marker, negative otherwise
//! (a turn of no group is never positive); a hard negative is a pair of two `neg` groups named
//! as each other's `pair`. Pairs with equal fold keys fold whatever the thresholds: recall is
//! counted over the positives the key misses.

use memctl_engine::{Engine, EngineOptions, Settings};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

#[derive(Deserialize)]
struct Group {
    kind: String,
    marker: String,
    #[serde(default)]
    pair: Option<String>,
}

#[derive(Deserialize)]
struct Labels {
    groups: BTreeMap<String, Group>,
    sessions: Vec<String>,
}

/// One chunk: its group, text and model vector.
struct Item {
    group: Option<String>,
    text: String,
    vector: Option<Vec<f32>>,
}

/// One pair of chunks: what the thresholds test.
struct Pair {
    label: Label,
    key: bool,
    text: f32,
    cosine: Option<f32>,
}

#[derive(Clone, Copy, PartialEq)]
enum Label {
    Near,
    Negative,
    Hard,
}

const TEXT: [f32; 12] = [
    0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95,
];
const VECTOR: [f32; 7] = [0.0, 0.8, 0.9, 0.93, 0.95, 0.97, 0.99];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args().nth(1) else {
        return Err("usage: fold_sweep <labels.json> (MEMCTL_HOME=<home>)".into());
    };
    let labels: Labels = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let settings = Settings::from_vars(std::env::vars_os())?;
    let engine = Engine::open_read_only(EngineOptions::from_settings(&settings))?;
    let items = items(&engine, &labels)?;
    let pairs = pairs(&items, &labels);
    let count = |l: Label| pairs.iter().filter(|p| p.label == l).count();
    let near_missed: Vec<&Pair> = pairs
        .iter()
        .filter(|p| p.label == Label::Near && !p.key)
        .collect();
    println!(
        "{} chunks, {} pairs: {} near-copy pairs ({} with other fold keys), {} negative ({} hard)",
        items.len(),
        pairs.len(),
        count(Label::Near),
        near_missed.len(),
        count(Label::Negative) + count(Label::Hard),
        count(Label::Hard)
    );
    let wrong_key = pairs
        .iter()
        .filter(|p| p.key && p.label != Label::Near)
        .count();
    println!("negative pairs with equal fold keys (folded whatever the thresholds): {wrong_key}");
    println!();
    println!(
        "Each cell: near-copy pairs the key misses folded (of {}) / wrong folds (hard negatives)",
        near_missed.len()
    );
    print!("| Jaccard ≥ \\ cosine ≥ |");
    for v in VECTOR {
        print!(" {v:.2} |");
    }
    println!(" no vector |");
    println!("|---|{}---|", "---|".repeat(VECTOR.len()));
    for t in TEXT {
        print!("| {t:.2} |");
        for v in VECTOR {
            let (hit, wrong, hard) =
                score(&pairs, |p| p.text >= t && p.cosine.is_some_and(|c| c >= v));
            print!(" {hit} / {wrong} ({hard}) |");
        }
        let (hit, wrong, hard) = score(&pairs, |p| p.text >= t);
        println!(" {hit} / {wrong} ({hard}) |");
    }
    println!();
    extremes(&pairs);
    Ok(())
}

/// The chunks of the labelled sessions (each once), labelled by the text of their turn.
fn items(engine: &Engine, labels: &Labels) -> Result<Vec<Item>, Box<dyn std::error::Error>> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for sid in &labels.sessions {
        let chunks = engine.session_chunks(sid)?;
        let mut turn_text: HashMap<u32, String> = HashMap::new();
        for (_, rec) in &chunks {
            turn_text
                .entry(rec.chunk.turn_index)
                .or_default()
                .push_str(&rec.chunk.text);
        }
        for ((_, id), rec) in chunks {
            if !seen.insert(id) {
                continue;
            }
            let turn = &turn_text[&rec.chunk.turn_index];
            let group = labels
                .groups
                .iter()
                .find(|(_, g)| turn.contains(&g.marker))
                .map(|(n, _)| n.clone());
            out.push(Item {
                group,
                vector: engine.model_vector(id)?,
                text: rec.chunk.text,
            });
        }
    }
    Ok(out)
}

fn pairs(items: &[Item], labels: &Labels) -> Vec<Pair> {
    let mut out = Vec::new();
    for (i, a) in items.iter().enumerate() {
        for b in &items[i + 1..] {
            let label = match (&a.group, &b.group) {
                (Some(x), Some(y)) if x == y => Label::Near,
                (Some(x), Some(y))
                    if labels.groups[x].kind == "neg"
                        && labels.groups[x].pair.as_deref() == Some(y.as_str()) =>
                {
                    Label::Hard
                }
                _ => Label::Negative,
            };
            let text = memctl_engine::text_similarity(&a.text, &b.text);
            let cosine = match (&a.vector, &b.vector) {
                (Some(x), Some(y)) => Some(x.iter().zip(y).map(|(p, q)| p * q).sum()),
                _ => None,
            };
            out.push(Pair {
                label,
                key: memctl_engine::fold_key(&a.text) == memctl_engine::fold_key(&b.text),
                text,
                cosine,
            });
        }
    }
    out
}

/// (near-copy pairs the key misses that `fold` folds, negatives it folds, of them hard).
fn score(pairs: &[Pair], fold: impl Fn(&Pair) -> bool) -> (usize, usize, usize) {
    let (mut hit, mut wrong, mut hard) = (0, 0, 0);
    for p in pairs.iter().filter(|p| !p.key && fold(p)) {
        match p.label {
            Label::Near => hit += 1,
            Label::Hard => {
                wrong += 1;
                hard += 1;
            }
            Label::Negative => wrong += 1,
        }
    }
    (hit, wrong, hard)
}

/// The least similar near-copy pair and the most similar negative pairs, on each measure.
fn extremes(pairs: &[Pair]) {
    let near = pairs.iter().filter(|p| p.label == Label::Near && !p.key);
    let neg = || pairs.iter().filter(|p| p.label != Label::Near && !p.key);
    let min = |it: &mut dyn Iterator<Item = f32>| it.fold(f32::INFINITY, f32::min);
    let max = |it: &mut dyn Iterator<Item = f32>| it.fold(f32::NEG_INFINITY, f32::max);
    let near: Vec<&Pair> = near.collect();
    println!(
        "near-copy pairs the key misses: Jaccard min {:.3}, cosine min {:.3}",
        min(&mut near.iter().map(|p| p.text)),
        min(&mut near.iter().filter_map(|p| p.cosine))
    );
    println!(
        "negative pairs: Jaccard max {:.3}, cosine max {:.3}; hard negatives: Jaccard max {:.3}, cosine max {:.3}",
        max(&mut neg().map(|p| p.text)),
        max(&mut neg().filter_map(|p| p.cosine)),
        max(&mut neg().filter(|p| p.label == Label::Hard).map(|p| p.text)),
        max(&mut neg()
            .filter(|p| p.label == Label::Hard)
            .filter_map(|p| p.cosine))
    );
    let both = |p: &&Pair| p.cosine.map_or(0.0, |c| p.text.min(c));
    let top = neg().max_by(|a, b| both(a).total_cmp(&both(b)));
    if let Some(p) = top {
        println!(
            "most similar negative on both: Jaccard {:.3}, cosine {:.3}",
            p.text,
            p.cosine.unwrap_or(0.0)
        );
    }
}
