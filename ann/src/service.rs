//! The follower and the search: what the resident service runs.
//!
//! One thread ([`AnnService::run`]) reads the store's int8 entries of the model's space as
//! they are appended ([`memctl_engine::Engine::follow_vectors`]), inserts them into the graph
//! of their project, and saves graphs that stopped changing. When the store's block epoch
//! moves (a compaction, a forget), it reads everything again and tombstones what is gone; after
//! a forget, graphs holding tombstones are dropped and rebuilt from the store, so no index file
//! ever holds a forgotten vector again (every forget also removes the files themselves).
//!
//! Searches ([`memctl_engine::DenseService::search`]) answer from the graphs of projects with
//! at least [`AnnConfig::min_vectors`] points, with the cursor each graph has read up to: the
//! caller scans the rest exactly.

use crate::dist::{self, point};
use crate::graph::{Graph, GraphParams};
use crate::layered::{FreezePolicy, Layered};
use crate::{AnnError, persist};
use memctl_engine::{
    AnnAnswer, BlockCursor, DenseService, EmbedderId, Engine, EngineOptions, TopK, ann_dir,
};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// Settings of the service index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnnConfig {
    /// Graph parameters.
    pub params: GraphParams,
    /// Below this many vectors in a project the caller's exact scan is as fast: no answer for
    /// it (the graph is still kept, so it is ready when the project grows).
    pub min_vectors: usize,
    /// Entries read per step (bounds the memory of a first read of a big store).
    pub step: u64,
    /// How often the follower looks for new entries.
    pub poll: Duration,
    /// A graph is saved once it has not changed for this long.
    pub save_after: Duration,
    /// When a quiet graph is frozen into its project's flat base ([`Layered`]).
    pub freeze: FreezePolicy,
}

impl Default for AnnConfig {
    fn default() -> Self {
        let settings = memctl_engine::IndexSettings::default();
        Self {
            params: GraphParams::default(),
            min_vectors: settings.min_vectors,
            step: 50_000,
            poll: Duration::from_secs(1),
            save_after: settings.save_after,
            freeze: FreezePolicy::default(),
        }
    }
}

/// The service index of one data dir and one space.
#[derive(Debug)]
pub struct AnnService {
    opts: EngineOptions,
    space: EmbedderId,
    dir: PathBuf,
    cfg: AnnConfig,
    state: RwLock<State>,
    /// A big tail was frozen: its memory stays with the allocator until the process ends.
    restart: AtomicBool,
}

#[derive(Debug, Default)]
struct State {
    /// Block epoch of the last read; None before the first.
    epoch: Option<u64>,
    projects: HashMap<u32, Project>,
    /// Chunks visited since a read from the start began (until it has caught up).
    reconcile: Option<HashSet<u64>>,
    /// The store's forget count at the last step.
    forget_epoch: Option<u64>,
    /// A forget happened: graphs with tombstones may hold its vectors (never saved; rebuilt).
    forget_dirty: bool,
}

#[derive(Debug)]
struct Project {
    index: Layered,
    /// The file the base was last saved to; None when the base is new or changed since.
    base_file: Option<String>,
    cursor: BlockCursor,
    /// Changed since the last save, and when.
    unsaved: Option<Instant>,
    /// A big hnsw_rs tail was frozen: once the base is saved, a restart gives its memory back.
    freed: bool,
}

impl Project {
    fn new(tail: Arc<Graph>, project: u32) -> Self {
        Self {
            index: Layered::new(tail),
            base_file: None,
            cursor: BlockCursor {
                project,
                block: 0,
                count: 0,
            },
            unsaved: None,
            freed: false,
        }
    }
}

impl AnnService {
    /// The index of the data dir of `opts` for `space` (nothing is read until [`Self::run`]).
    pub fn new(opts: EngineOptions, space: EmbedderId, cfg: AnnConfig) -> Self {
        Self {
            dir: ann_dir(&opts.data_dir),
            opts,
            space,
            cfg,
            state: RwLock::new(State::default()),
            restart: AtomicBool::new(false),
        }
    }

    /// Take in the graphs saved in the data dir (a file that does not load is removed: the
    /// graph is rebuilt from the store).
    pub fn load_saved(&self) {
        persist::remove_strays(&self.dir);
        let mut st = self.write();
        let mut epochs = HashSet::new();
        let mut forgets = HashSet::new();
        for p in persist::saved_projects(&self.dir) {
            match persist::load(&self.dir, p) {
                Ok(Some(l)) if l.position.space == self.space.key() => {
                    epochs.insert(l.position.epoch);
                    forgets.insert(l.position.forgets);
                    let ef = self.cfg.params.ef_search;
                    let index = Layered {
                        base: l.base.map(|b| Arc::new(b.with_ef_search(ef))),
                        tail: Arc::new(l.tail.with_ef_search(ef)),
                    };
                    let project = Project {
                        index,
                        base_file: l.base_file,
                        cursor: l.position.cursor,
                        unsaved: None,
                        freed: false,
                    };
                    st.projects.insert(p, project);
                }
                Ok(_) => persist::remove_dumps(&self.dir, p, None),
                Err(e) => {
                    tracing::warn!(project = p, error = %e, "vector index not loaded; rebuilding");
                    persist::remove_dumps(&self.dir, p, None);
                }
            }
        }
        // Graphs saved under different epochs: read everything once and reconcile.
        st.epoch = (epochs.len() == 1)
            .then(|| epochs.into_iter().next())
            .flatten();
        // The forget count the files were saved under: a forget after it (before the first
        // step) makes the first step rebuild what holds tombstones. Files of different counts
        // should not coexist (every forget removes them all): rebuild those with tombstones.
        st.forget_epoch = forgets.iter().max().copied();
        st.forget_dirty = forgets.len() > 1;
        let points: usize = st.projects.values().map(|p| p.index.len()).sum();
        tracing::info!(points, projects = st.projects.len(), "vector index loaded");
    }

    /// Load the saved graphs, then follow the store until the process ends (the service's
    /// index thread).
    pub fn run(&self) {
        memctl_engine::lower_priority();
        self.load_saved();
        let mut engine = None;
        let mut announced = false;
        loop {
            if engine.is_none() {
                // No store yet, or one a writer must migrate or repair first: look again later.
                engine = match Engine::open_read_only(self.opts.clone()) {
                    Ok(e) => Some(e),
                    Err(e) => {
                        tracing::debug!(error = %e, "vector index: store not readable yet");
                        None
                    }
                };
            }
            let busy = match engine.as_ref().map(|e| self.step(e)) {
                Some(Ok(read)) => {
                    // Said once it has caught up, then whenever it catches up again.
                    if read < self.cfg.step && (read > 0 || !announced) {
                        let points: usize = self.sizes().values().sum();
                        tracing::info!(points, "vector index up to date");
                        announced = true;
                    }
                    read >= self.cfg.step
                }
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "vector index: reading the store failed");
                    engine = None;
                    false
                }
                None => false,
            };
            if let Some(e) = engine.as_ref() {
                self.save_quiet(e);
            }
            if !busy {
                std::thread::sleep(self.cfg.poll);
            }
        }
    }

    /// Live points per project (tests, the log).
    pub fn sizes(&self) -> HashMap<u32, usize> {
        self.read()
            .projects
            .iter()
            .map(|(p, pr)| (*p, pr.index.len()))
            .collect()
    }

    /// Live points per project in its base and its tail (tests).
    #[cfg(test)]
    pub(crate) fn parts(&self) -> HashMap<u32, (usize, usize)> {
        self.read()
            .projects
            .iter()
            .map(|(p, pr)| {
                let base = pr.index.base.as_ref().map_or(0, |b| b.len());
                (*p, (base, pr.index.tail.len()))
            })
            .collect()
    }

    /// Whether the last step has read everything the store held (tests).
    pub fn caught_up(&self, engine: &Engine) -> Result<bool, AnnError> {
        let (cursors, epoch) = self.position();
        let mut n = 0u64;
        let f = engine.follow_vectors(&self.space, &cursors, epoch, 1, &mut |_| n += 1)?;
        Ok(!f.from_start && n == 0 && self.read().reconcile.is_none())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn position(&self) -> (Vec<BlockCursor>, Option<u64>) {
        let st = self.read();
        (st.projects.values().map(|p| p.cursor).collect(), st.epoch)
    }

    /// Read what was appended (or everything, after the epoch moved) and insert it. Returns
    /// how many entries were read.
    pub fn step(&self, engine: &Engine) -> Result<u64, AnnError> {
        // Read before the entries: a forget counted here is visible in them.
        let forget_epoch = engine.forget_epoch()?;
        let (cursors, epoch) = self.position();
        let graphs: HashMap<u32, Layered> = self
            .read()
            .projects
            .iter()
            .map(|(p, pr)| (*p, pr.index.clone()))
            .collect();
        let mut fresh: HashMap<u32, Vec<(u64, Vec<i8>)>> = HashMap::new();
        let mut visited = Vec::new();
        let followed =
            engine.follow_vectors(&self.space, &cursors, epoch, self.cfg.step, &mut |e| {
                visited.push(e.id);
                if !graphs.get(&e.project).is_some_and(|g| g.contains(e.id)) {
                    fresh
                        .entry(e.project)
                        .or_default()
                        .push((e.id, point(e.codes, e.scale)));
                }
            })?;
        let mut added = HashMap::new();
        for (p, points) in fresh {
            let graph = graphs
                .get(&p)
                .map(|l| Arc::clone(&l.tail))
                .unwrap_or_else(|| Arc::new(Graph::new(self.cfg.params, points.len())));
            graph.insert(&points);
            added.insert(p, graph);
        }
        let read = followed.visited;
        self.advance(followed, visited, added, forget_epoch);
        Ok(read)
    }

    /// Take in what one step read: new graphs and cursors, the reconcile after an epoch move,
    /// and the rebuild of graphs a forget may have left its vectors in.
    fn advance(
        &self,
        followed: memctl_engine::Followed,
        visited: Vec<u64>,
        added: HashMap<u32, Arc<Graph>>,
        forget_epoch: u64,
    ) {
        let now = Instant::now();
        let mut st = self.write();
        if followed.from_start {
            st.reconcile = Some(HashSet::new());
        }
        if let Some(seen) = st.reconcile.as_mut() {
            seen.extend(visited);
        }
        for (p, graph) in added {
            let pr = st
                .projects
                .entry(p)
                .or_insert_with(|| Project::new(Arc::clone(&graph), p));
            pr.index.tail = graph;
            pr.unsaved = Some(now);
        }
        for c in &followed.cursors {
            if let Some(pr) = st.projects.get_mut(&c.project) {
                pr.cursor = *c;
            }
        }
        st.epoch = Some(followed.epoch);
        if st.forget_epoch.is_some_and(|e| e != forget_epoch) {
            st.forget_dirty = true;
        }
        st.forget_epoch = Some(forget_epoch);
        let caught_up = followed.visited < self.cfg.step;
        if caught_up && let Some(seen) = st.reconcile.take() {
            let listed: HashSet<u32> = followed.cursors.iter().map(|c| c.project).collect();
            st.projects.retain(|p, _| listed.contains(p));
            for pr in st.projects.values_mut() {
                let (base, tail) = pr.index.retain(&seen);
                if base > 0 {
                    // Its tombstones are part of the base's file: written again.
                    pr.base_file = None;
                }
                if base + tail > 0 {
                    pr.unsaved = Some(now);
                }
            }
        }
        if st.forget_dirty && st.reconcile.is_none() {
            // Graphs with tombstones may hold a forgotten vector: rebuild them from the store
            // (a project without a cursor is read from its first entry by the next step).
            let dir = self.dir.clone();
            st.projects.retain(|p, pr| {
                let keep = pr.index.dead() == 0;
                if !keep {
                    persist::remove_dumps(&dir, *p, None);
                }
                keep
            });
            st.forget_dirty = false;
        }
    }

    /// Save every graph that changed since it was last saved, now (tests, benches).
    pub fn save_now(&self, engine: &Engine) {
        for pr in self.write().projects.values_mut() {
            if let Some(t) = pr.unsaved.as_mut() {
                *t = Instant::now() - self.cfg.save_after;
            }
        }
        self.save_quiet(engine);
    }

    /// Save the indexes that have not changed for [`AnnConfig::save_after`] (none while a
    /// reconcile or a rebuild after a forget is pending), each consolidated first when its
    /// tail is due ([`Layered::consolidated`]). A forget that commits while an index is
    /// consolidated or written is seen by the second read of its count: the result is dropped
    /// and the files go.
    fn save_quiet(&self, engine: &Engine) {
        for (p, pos) in self.due() {
            let before = self.read().forget_epoch;
            self.consolidate(p);
            let Some((index, base_file)) = self
                .read()
                .projects
                .get(&p)
                .map(|pr| (pr.index.clone(), pr.base_file.clone()))
            else {
                continue;
            };
            let saved = persist::save(&self.dir, p, &index, base_file.as_deref(), &pos);
            // An unreadable count counts as moved: the files go (rebuilt and saved later).
            let after = match engine.forget_epoch() {
                Ok(e) => Some(e),
                Err(e) => {
                    tracing::warn!(error = %e, "vector index: forget count unreadable; not saved");
                    None
                }
            };
            if after.is_none() || after != before {
                persist::remove_dumps(&self.dir, p, None);
                continue;
            }
            match saved {
                Ok(file) => {
                    if let Some(pr) = self.write().projects.get_mut(&p)
                        && Arc::ptr_eq(&pr.index.tail, &index.tail)
                        && same_base(&pr.index, &index)
                    {
                        pr.unsaved = None;
                        pr.base_file = file;
                        // Only once the base is on disk: a restart before would rebuild it
                        // from the store, freeze it, and restart again.
                        if std::mem::take(&mut pr.freed) {
                            self.restart.store(true, Ordering::Relaxed);
                        }
                    }
                }
                Err(e) => tracing::warn!(project = p, error = %e, "vector index not saved"),
            }
        }
    }

    /// The projects whose index is due to be saved, with the position to save.
    fn due(&self) -> Vec<(u32, persist::Position)> {
        let st = self.read();
        if st.reconcile.is_some() || st.forget_dirty {
            return Vec::new();
        }
        let (Some(epoch), Some(forgets)) = (st.epoch, st.forget_epoch) else {
            return Vec::new();
        };
        st.projects
            .iter()
            .filter(|(_, pr)| {
                pr.unsaved
                    .is_some_and(|t| t.elapsed() >= self.cfg.save_after)
            })
            .map(|(p, pr)| {
                let pos = persist::Position {
                    space: self.space.key(),
                    epoch,
                    cursor: pr.cursor,
                    forgets,
                };
                (*p, pos)
            })
            .collect()
    }

    /// Freeze or merge the tail of `project` into its base when the policy says so. Runs on
    /// the follower's thread (nothing inserts meanwhile) with no lock held; searches use the
    /// old index until the new one is swapped in, which happens only if nothing changed it
    /// meanwhile (a reconcile's tombstones, a forget).
    fn consolidate(&self, project: u32) {
        let Some(old) = self
            .read()
            .projects
            .get(&project)
            .map(|pr| pr.index.clone())
        else {
            return;
        };
        let forget = self.read().forget_epoch;
        let started = Instant::now();
        let new = match old.consolidated(self.cfg.freeze, self.cfg.params) {
            Ok(Some(new)) => new,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(project, error = %e, "vector index not frozen");
                return;
            }
        };
        let mut st = self.write();
        let unchanged = st.forget_epoch == forget && !st.forget_dirty && st.reconcile.is_none();
        let Some(pr) = st.projects.get_mut(&project) else {
            return;
        };
        if !unchanged
            || !Arc::ptr_eq(&pr.index.tail, &old.tail)
            || !same_base(&pr.index, &old)
            || pr.index.dead() != old.dead()
        {
            return;
        }
        tracing::info!(
            project,
            points = new.len(),
            ms = started.elapsed().as_millis() as u64,
            "vector index frozen"
        );
        pr.index = new;
        pr.base_file = None;
        // The points of the replaced hnsw_rs tail (~2.4 KB each, allocated on the insert
        // threads) stay with the allocator; a restarted service loads only the base's file.
        pr.freed |= old.tail.len() >= self.cfg.freeze.min_points;
    }

    /// Whether a freeze left memory only a restart gives back (tests).
    pub fn restart_wanted(&self) -> bool {
        self.restart.load(Ordering::Relaxed)
    }
}

/// Whether two indexes share their base (both none, or the same one).
fn same_base(a: &Layered, b: &Layered) -> bool {
    match (&a.base, &b.base) {
        (None, None) => true,
        (Some(x), Some(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

impl DenseService for AnnService {
    fn search(
        &self,
        space: &EmbedderId,
        projects: &[u32],
        query: &[f32],
        k: usize,
    ) -> Option<AnnAnswer> {
        if space.key() != self.space.key() || query.len() != space.dims {
            return None;
        }
        let st = self.read();
        let epoch = st.epoch?;
        let q = dist::query_point(query);
        let mut covered = Vec::new();
        let mut top = TopK::new(k);
        for p in projects {
            let Some(pr) = st.projects.get(p) else {
                continue;
            };
            if pr.index.len() < self.cfg.min_vectors {
                continue;
            }
            covered.push(pr.cursor);
            for h in pr.index.search(&q, k) {
                top.push(h.id, h.score);
            }
        }
        Some(AnnAnswer {
            space: space.key(),
            epoch,
            covered,
            hits: crate::graph::hits(top),
        })
    }

    fn follow(&self) {
        self.run();
    }

    fn restart_wanted(&self) -> bool {
        AnnService::restart_wanted(self)
    }
}
