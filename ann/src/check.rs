//! `memctl check` of the vector index files against the store.
//!
//! A saved graph is consistent when its files match their sidecar (lengths and CRCs) and, if it
//! was saved under the store's current block epoch and space, its live points are exactly the
//! store's entries of its project up to its cursor: nothing forgotten or foreign is in it and
//! nothing before its cursor is missing (the service only reads past the cursor). A graph of an
//! older epoch or another space is stale, not broken: the service re-reads or drops it.

use crate::AnnError;
use crate::persist::{self, SavedGraph};
use memctl_engine::{EmbedderId, Engine};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// How a saved graph relates to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GraphState {
    /// Saved under the store's block epoch and space, and matches the store up to its cursor.
    Current,
    /// Saved under an older block epoch or another space: the service re-reads or drops it.
    Stale,
    /// Broken: listed in [`IndexCheck::violations`]; the service refuses it and rebuilds.
    Broken,
}

/// One project's saved graph, as checked.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct GraphCheck {
    /// The store's project id.
    pub project: u32,
    /// Live points (tombstones excluded).
    pub points: u64,
    /// Points kept as tombstones (their bytes stay in the file until the graph is rebuilt).
    pub tombstones: u64,
    /// Store entries of the project after the graph's cursor (the service reads them next).
    pub behind: u64,
    /// What the check found.
    pub state: GraphState,
}

/// What [`check_index`] found in `<data dir>/ann/`.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct IndexCheck {
    /// One entry per saved graph.
    pub graphs: Vec<GraphCheck>,
    /// Broken rules, one sentence each.
    pub violations: Vec<String>,
}

/// Check the graphs saved in `dir` (the data dir's `ann/`) against `engine`'s store, for the
/// service's `space`.
pub fn check_index(
    dir: &Path,
    engine: &Engine,
    space: &EmbedderId,
) -> Result<IndexCheck, AnnError> {
    let mut out = IndexCheck::default();
    let mut saved = Vec::new();
    let mut projects = persist::saved_projects(dir);
    projects.sort_unstable();
    for project in projects {
        match persist::read_saved(dir, project) {
            Ok(Some(s)) => saved.push(s),
            Ok(None) => {}
            Err(e) => {
                out.violations.push(format!(
                    "vector index of project {project}: {e} (remove {} or start `memctl \
                     embedder`: it is rebuilt from the store)",
                    dir.display()
                ));
                out.graphs.push(GraphCheck {
                    project,
                    points: 0,
                    tombstones: 0,
                    behind: 0,
                    state: GraphState::Broken,
                });
            }
        }
    }
    if saved.is_empty() {
        return Ok(out);
    }
    let store = StoreEntries::read(engine, space, &saved)?;
    for s in &saved {
        let (check, broken) = compare(s, &store, space);
        out.violations.extend(broken);
        out.graphs.push(check);
    }
    out.graphs.sort_by_key(|g| g.project);
    Ok(out)
}

/// The store's entry ids per project: all of them, and those after each saved cursor.
struct StoreEntries {
    epoch: u64,
    all: HashMap<u32, HashSet<u64>>,
    after: HashMap<u32, HashSet<u64>>,
}

impl StoreEntries {
    fn read(engine: &Engine, space: &EmbedderId, saved: &[SavedGraph]) -> Result<Self, AnnError> {
        let mut all: HashMap<u32, HashSet<u64>> = HashMap::new();
        let first = engine.follow_vectors(space, &[], None, u64::MAX, &mut |e| {
            all.entry(e.project).or_default().insert(e.id);
        })?;
        let cursors: Vec<_> = saved.iter().map(|s| s.position.cursor).collect();
        let mut after: HashMap<u32, HashSet<u64>> = HashMap::new();
        let second =
            engine.follow_vectors(space, &cursors, Some(first.epoch), u64::MAX, &mut |e| {
                after.entry(e.project).or_default().insert(e.id);
            })?;
        if second.epoch != first.epoch {
            return Err(AnnError::Corrupt(
                "the store's vector blocks changed during the check: run it again".into(),
            ));
        }
        Ok(Self {
            epoch: first.epoch,
            all,
            after,
        })
    }
}

/// One saved graph against the store: its check and the rules it breaks.
fn compare(s: &SavedGraph, store: &StoreEntries, space: &EmbedderId) -> (GraphCheck, Vec<String>) {
    let project = s.position.cursor.project;
    let live: HashSet<u64> = s.live_ids().collect();
    let after = store.after.get(&project);
    let mut check = GraphCheck {
        project,
        points: live.len() as u64,
        tombstones: s.tombstones() as u64,
        behind: after.map_or(0, |a| a.len() as u64),
        state: GraphState::Stale,
    };
    if s.position.space != space.key() || s.position.epoch != store.epoch {
        return (check, Vec::new());
    }
    let empty = HashSet::new();
    let all = store.all.get(&project).unwrap_or(&empty);
    let after = after.unwrap_or(&empty);
    let not_in_store = live.iter().filter(|id| !all.contains(id)).count();
    let missing = all
        .iter()
        .filter(|id| !after.contains(id) && !live.contains(id))
        .count();
    let mut broken = Vec::new();
    if not_in_store > 0 {
        broken.push(format!(
            "vector index of project {project}: {not_in_store} point(s) the store no longer \
             holds (remove the ann/ folder; the service rebuilds it)"
        ));
    }
    if missing > 0 {
        broken.push(format!(
            "vector index of project {project}: {missing} store entr(ies) before its cursor \
             are not in it (remove the ann/ folder; the service rebuilds it)"
        ));
    }
    check.state = if broken.is_empty() {
        GraphState::Current
    } else {
        GraphState::Broken
    };
    (check, broken)
}
