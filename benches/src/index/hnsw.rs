//! HNSW graph index (hnsw_rs) for long-lived processes and large N.
//!
//! Why not everywhere: reloading a dumped graph costs 8–17 µs per vector (docs/perf/search.md),
//! so a hook process that lives 20 ms scans encoded blocks instead
//! ([`memctl_engine::rescore`]). A server-mode or
//! long CLI session builds or loads this once and then answers in ~1 ms.
//!
//! hnsw_rs has no delete: `remove` tombstones the internal point and searches over-fetch and
//! filter; [`HnswIndex::needs_rebuild`] says when the dead fraction makes that wasteful and the
//! caller should rebuild from the store.
//!
//! Our `u64` ids map to hnsw_rs's `usize` data ids through a dense internal numbering (the
//! internal id is the insertion ordinal), so replacing a vector never reuses a graph id.

use hnsw_rs::prelude::{AnnT, DistDot, Hnsw, HnswIo};
use memctl_engine::{EmbedderId, Hit, IndexError, TopK, VectorIndex, checked_normalized};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

/// hnsw_rs dumps fail unless the graph was created with its maximum layer count.
const MAX_LAYER: usize = 16;
/// Sidecar file name inside the index directory.
const SIDECAR: &str = "memctl-hnsw.meta";
const SIDECAR_MAGIC: [u8; 8] = *b"MCHNSW01";
/// Stored vectors are scaled by this before they enter the graph.
///
/// Why: hnsw_rs's `DistDot` asserts `dot <= 1.000002`, and the f32 dot of a normalized vector
/// with itself (SIMD lane order, FMA) can land just above that: a panic on a self-query. Scaling
/// the stored side by 1 − 1e-4 keeps every dot below 1 with margin; scores are divided back, so
/// callers still see cosines (ranking is unaffected).
const SHRINK: f32 = 1.0 - 1e-4;
/// Prefix of the dump base names we own in the index directory (old dumps are deleted by it).
const DUMP_PREFIX: &str = "memctl-hnsw-g";

/// Graph parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct HnswParams {
    /// Max neighbours per node and layer (hnsw_rs `max_nb_connection`).
    pub m: usize,
    /// Candidate list size while building.
    pub ef_construction: usize,
    /// Candidate list size while searching (raised to `k` or the over-fetch when smaller).
    pub ef_search: usize,
    /// Expected number of vectors (allocation hint only).
    pub capacity_hint: usize,
}

impl Default for HnswParams {
    /// M = 32, efC = 200, efS = 160: recall@10 = 0.989 vs the exact oracle at N = 100k
    /// (hash-embedded synthetic text, 500 queries; `recall_tests.rs`), ~1 ms per query.
    ///
    /// Measured at N = 100k (recall@10 over 500 queries; builds are parallel, so repeated builds
    /// differ by ±0.002): M = 32: ef 96 → 0.980, ef 128 → 0.985–0.987 (0.980 on the bench's 100
    /// queries, hence the margin), ef 160 → 0.989, ef 192 → 0.991, ef 256 → 0.993; build 85–150 s
    /// on 2 busy cores. M = 24: ef 128 → 0.980, ef 192 → 0.987. M = 16: ef 128 → 0.973,
    /// ef 256 → 0.983, build 44 s. On this data M = 16 plateaus below 0.98 until ef ≈ 256, so
    /// the denser graph buys recall more cheaply than a wider search.
    fn default() -> Self {
        Self {
            m: 32,
            ef_construction: 200,
            ef_search: 160,
            capacity_hint: 10_000,
        }
    }
}

/// HNSW index with tombstones; see the module doc.
pub struct HnswIndex {
    embedder: EmbedderId,
    params: HnswParams,
    hnsw: Hnsw<'static, f32, DistDot>,
    /// internal id → external id.
    ids: Vec<u64>,
    /// internal id → removed or replaced.
    dead: Vec<bool>,
    n_dead: usize,
    /// external id → live internal id.
    live: HashMap<u64, usize>,
    generation: u64,
}

impl std::fmt::Debug for HnswIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HnswIndex")
            .field("embedder", &self.embedder)
            .field("params", &self.params)
            .field("points", &self.ids.len())
            .field("live", &self.live.len())
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// What `save` writes next to the hnsw_rs dump: everything hnsw_rs does not know about.
#[derive(Debug, Serialize, Deserialize)]
struct Sidecar {
    embedder: EmbedderId,
    params: HnswParams,
    generation: u64,
    /// hnsw_rs base name of the dump (`None` for an empty index: hnsw_rs cannot dump one).
    basename: Option<String>,
    ids: Vec<u64>,
    dead: Vec<u64>,
    graph: FileStamp,
    data: FileStamp,
}

/// Length and checksum of a dump file: hnsw_rs's loader asserts and unwraps on bad input, so
/// we refuse a truncated or altered file before handing it over.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct FileStamp {
    len: u64,
    sum: u64,
}

impl HnswIndex {
    /// An empty index.
    pub fn new(embedder: EmbedderId, params: HnswParams) -> Self {
        let hnsw = new_graph(&params);
        Self {
            embedder,
            params,
            hnsw,
            ids: Vec::new(),
            dead: Vec::new(),
            n_dead: 0,
            live: HashMap::new(),
            generation: 0,
        }
    }

    /// Parameters in use.
    pub fn params(&self) -> &HnswParams {
        &self.params
    }

    /// Change the search-time candidate list size (recall/latency trade-off).
    pub fn set_ef_search(&mut self, ef: usize) {
        self.params.ef_search = ef.max(1);
    }

    /// The caller's version stamp of the vector set this index reflects (e.g. the store's vector
    /// generation). Saved and loaded with the index: after [`load`](Self::load) compare it with the
    /// store's and rebuild when it differs.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Set the version stamp (see [`generation`](Self::generation)).
    pub fn set_generation(&mut self, generation: u64) {
        self.generation = generation;
    }

    /// Fraction of graph points that are tombstones.
    pub fn tombstone_ratio(&self) -> f64 {
        if self.ids.is_empty() {
            0.0
        } else {
            self.n_dead as f64 / self.ids.len() as f64
        }
    }

    /// True when more than 20% of the graph is tombstones: searches over-fetch by that much and
    /// the dead points still cost memory, so rebuild from the store.
    pub fn needs_rebuild(&self) -> bool {
        self.tombstone_ratio() > 0.2
    }

    fn tombstone(&mut self, internal: usize) {
        if let Some(d) = self.dead.get_mut(internal)
            && !*d
        {
            *d = true;
            self.n_dead += 1;
        }
    }

    /// Register `id` under a new internal id (tombstoning an older one); returns the internal id.
    fn assign(&mut self, id: u64) -> usize {
        let internal = self.ids.len();
        if let Some(old) = self.live.insert(id, internal) {
            self.tombstone(old);
        }
        self.ids.push(id);
        self.dead.push(false);
        internal
    }

    /// Write the index to `dir` (created if missing): an hnsw_rs dump plus our sidecar.
    ///
    /// Crash-safe ordering: the dump goes to a fresh base name, then the sidecar is written to a
    /// temporary file and renamed over the old one, then older dumps are deleted. A crash at any
    /// point leaves either the old or the new index loadable. The directory belongs to this
    /// index: files named `memctl-hnsw-g*` other than the current dump are removed.
    pub fn save(&self, dir: &Path) -> Result<(), IndexError> {
        fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        let (basename, graph, data) = if self.ids.is_empty() {
            (None, FileStamp::default(), FileStamp::default())
        } else {
            let wanted = unused_basename(dir, self.generation);
            // hnsw_rs panics when it cannot create its files and may pick another base name
            // than asked: trust only what it returns.
            let dumped = catch_unwind(AssertUnwindSafe(|| self.hnsw.file_dump(dir, &wanted)))
                .map_err(|_| io_err(dir, std::io::Error::other("hnsw_rs file_dump panicked")))?
                .map_err(|e| {
                    io_err(
                        dir,
                        std::io::Error::other(format!("hnsw_rs file_dump: {e}")),
                    )
                })?;
            let graph = stamp(&dir.join(format!("{dumped}.hnsw.graph")))?;
            let data = stamp(&dir.join(format!("{dumped}.hnsw.data")))?;
            (Some(dumped), graph, data)
        };
        let sidecar = Sidecar {
            embedder: self.embedder.clone(),
            params: self.params,
            generation: self.generation,
            basename: basename.clone(),
            ids: self.ids.clone(),
            dead: (0..self.dead.len())
                .filter(|&i| self.dead[i])
                .map(|i| i as u64)
                .collect(),
            graph,
            data,
        };
        let body = bincode::serde::encode_to_vec(&sidecar, bincode::config::standard())
            .map_err(|e| IndexError::Corrupt(format!("encoding the sidecar: {e}")))?;
        let mut bytes = Vec::with_capacity(body.len() + 16);
        bytes.extend_from_slice(&SIDECAR_MAGIC);
        bytes.extend_from_slice(&checksum(&body).to_le_bytes());
        bytes.extend_from_slice(&body);
        let tmp = dir.join(format!("{SIDECAR}.tmp"));
        {
            let mut f = fs::File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
            f.write_all(&bytes).map_err(|e| io_err(&tmp, e))?;
            f.sync_all().map_err(|e| io_err(&tmp, e))?;
        }
        let meta = dir.join(SIDECAR);
        fs::rename(&tmp, &meta).map_err(|e| io_err(&meta, e))?;
        remove_old_dumps(dir, basename.as_deref());
        Ok(())
    }

    /// Load an index saved by [`save`](Self::save).
    ///
    /// Errors: [`IndexError::EmbedderMismatch`] when it was built for another space,
    /// [`IndexError::Corrupt`] when the sidecar or dump is unreadable, truncated, altered or
    /// inconsistent (rebuild from the store), [`IndexError::Io`] when the sidecar is missing.
    /// Staleness is the caller's check: compare [`generation`](Self::generation) with the store.
    ///
    /// Note: hnsw_rs ties the loaded graph's lifetime to its loader; the loader (a few hundred
    /// bytes, no data: we do not mmap) is leaked once per load so the index can be `'static`.
    pub fn load(dir: &Path, embedder: &EmbedderId) -> Result<Self, IndexError> {
        let meta = dir.join(SIDECAR);
        let bytes = fs::read(&meta).map_err(|e| io_err(&meta, e))?;
        if bytes.len() < 16 || bytes[..8] != SIDECAR_MAGIC {
            return Err(IndexError::Corrupt(format!(
                "{}: bad header",
                meta.display()
            )));
        }
        let mut sum = [0u8; 8];
        sum.copy_from_slice(&bytes[8..16]);
        let body = &bytes[16..];
        if u64::from_le_bytes(sum) != checksum(body) {
            return Err(IndexError::Corrupt(format!(
                "{}: checksum mismatch",
                meta.display()
            )));
        }
        let config = bincode::config::standard().with_limit::<{ 1 << 30 }>();
        let (sc, _): (Sidecar, usize) = bincode::serde::decode_from_slice(body, config)
            .map_err(|e| IndexError::Corrupt(format!("{}: {e}", meta.display())))?;
        sc.embedder
            .ensure_same(embedder)
            .map_err(|_| IndexError::EmbedderMismatch {
                expected: embedder.key(),
                got: sc.embedder.key(),
            })?;

        let hnsw = match &sc.basename {
            None => {
                if !sc.ids.is_empty() {
                    return Err(IndexError::Corrupt("sidecar has ids but no dump".into()));
                }
                new_graph(&sc.params)
            }
            Some(base) => {
                if base.contains(['/', '\\']) || base.starts_with('.') {
                    return Err(IndexError::Corrupt(format!("bad dump base name {base:?}")));
                }
                for (suffix, want) in [("graph", sc.graph), ("data", sc.data)] {
                    let p = dir.join(format!("{base}.hnsw.{suffix}"));
                    let got = stamp(&p)?;
                    if got != want {
                        return Err(IndexError::Corrupt(format!(
                            "{}: length/checksum {got:?} differs from the sidecar's {want:?}",
                            p.display()
                        )));
                    }
                }
                let loader: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, base)));
                let loaded = catch_unwind(AssertUnwindSafe(move || {
                    // Moving the `&'static mut` in makes the closure FnOnce, so the graph may
                    // borrow the loader for 'static.
                    let loader = loader;
                    loader.load_hnsw::<f32, DistDot>()
                }))
                .map_err(|_| IndexError::Corrupt("hnsw_rs loader panicked".into()))?
                .map_err(|e| IndexError::Corrupt(format!("hnsw_rs load: {e}")))?;
                if loaded.get_nb_point() != sc.ids.len() {
                    return Err(IndexError::Corrupt(format!(
                        "dump has {} points, sidecar {}",
                        loaded.get_nb_point(),
                        sc.ids.len()
                    )));
                }
                let d = loaded.get_point_indexation().get_data_dimension();
                if d != embedder.dims {
                    return Err(IndexError::DimensionMismatch {
                        expected: embedder.dims,
                        got: d,
                    });
                }
                loaded
            }
        };

        let n = sc.ids.len();
        let mut dead = vec![false; n];
        for &i in &sc.dead {
            match dead.get_mut(i as usize) {
                Some(d) => *d = true,
                None => return Err(IndexError::Corrupt(format!("tombstone {i} out of range"))),
            }
        }
        let mut live = HashMap::with_capacity(n);
        for (i, (&id, &d)) in sc.ids.iter().zip(&dead).enumerate() {
            if !d && live.insert(id, i).is_some() {
                return Err(IndexError::Corrupt(format!("id {id} live twice")));
            }
        }
        Ok(Self {
            embedder: sc.embedder,
            params: sc.params,
            hnsw,
            ids: sc.ids,
            n_dead: sc.dead.len(),
            dead,
            live,
            generation: sc.generation,
        })
    }
}

impl VectorIndex for HnswIndex {
    fn embedder(&self) -> &EmbedderId {
        &self.embedder
    }

    fn len(&self) -> usize {
        self.live.len()
    }

    fn insert(&mut self, embedder: &EmbedderId, id: u64, vector: &[f32]) -> Result<(), IndexError> {
        let v = stored_form(checked_normalized(&self.embedder, embedder, vector)?);
        let internal = self.assign(id);
        self.hnsw.insert_slice((&v, internal));
        Ok(())
    }

    /// Parallel insertion (rayon): ~2× faster builds on 2 cores. The graph then depends on
    /// thread timing, so two builds may differ slightly (results on one graph are deterministic).
    fn insert_batch(
        &mut self,
        embedder: &EmbedderId,
        items: &[(u64, &[f32])],
    ) -> Result<(), IndexError> {
        // Validate everything first: a batch is all or nothing.
        let normed = items
            .iter()
            .map(|(_, v)| checked_normalized(&self.embedder, embedder, v).map(stored_form))
            .collect::<Result<Vec<_>, _>>()?;
        let mut data: Vec<(&[f32], usize)> = Vec::with_capacity(items.len());
        for ((id, _), v) in items.iter().zip(&normed) {
            data.push((v.as_slice(), self.assign(*id)));
        }
        self.hnsw.parallel_insert_slice(&data);
        Ok(())
    }

    fn remove(&mut self, id: u64) -> bool {
        match self.live.remove(&id) {
            Some(internal) => {
                self.tombstone(internal);
                true
            }
            None => false,
        }
    }

    fn search(
        &self,
        embedder: &EmbedderId,
        query: &[f32],
        k: usize,
    ) -> Result<Vec<Hit>, IndexError> {
        let q = checked_normalized(&self.embedder, embedder, query)?;
        let live = self.live.len();
        let total = self.ids.len();
        if k == 0 || live == 0 {
            return Ok(Vec::new());
        }
        let want = k.min(live);
        // Over-fetch in proportion to the dead fraction, then double until enough live hits
        // (or the whole graph) came back.
        let mut fetch = if self.n_dead == 0 {
            want
        } else {
            (want * total).div_ceil(live) + 8
        }
        .min(total);
        loop {
            let ef = self.params.ef_search.max(fetch);
            let found = self.hnsw.search(&q, fetch, ef);
            let mut top = TopK::new(k);
            let mut n_live = 0;
            for nb in &found {
                if self.dead.get(nb.d_id).copied().unwrap_or(true) {
                    continue;
                }
                if let Some(&id) = self.ids.get(nb.d_id) {
                    n_live += 1;
                    top.push(id, ((1.0 - nb.distance) / SHRINK).clamp(-1.0, 1.0));
                }
            }
            if n_live >= want || fetch >= total {
                return Ok(top.into_sorted());
            }
            fetch = (fetch * 2).min(total);
        }
    }
}

/// The form a normalized vector takes inside the graph (see [`SHRINK`]).
fn stored_form(mut v: Vec<f32>) -> Vec<f32> {
    for x in &mut v {
        *x *= SHRINK;
    }
    v
}

fn new_graph(p: &HnswParams) -> Hnsw<'static, f32, DistDot> {
    // hnsw_rs exits the process above 256 connections: clamp instead.
    Hnsw::new(
        p.m.clamp(2, 256),
        p.capacity_hint.max(16),
        MAX_LAYER,
        p.ef_construction.max(p.m),
        DistDot,
    )
}

fn io_err(path: &Path, source: std::io::Error) -> IndexError {
    IndexError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A base name whose files do not exist yet, so hnsw_rs never overwrites the dump the current
/// sidecar points to.
fn unused_basename(dir: &Path, generation: u64) -> String {
    let mut n = 0u64;
    loop {
        let b = format!("{DUMP_PREFIX}{generation}-{n}");
        let exists = |s: &str| dir.join(format!("{b}.hnsw.{s}")).exists();
        if !exists("data") && !exists("graph") {
            return b;
        }
        n += 1;
    }
}

/// Delete our dumps other than `keep` (best effort: a leftover file costs disk, not
/// correctness, and the next save retries).
fn remove_old_dumps(dir: &Path, keep: Option<&str>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(base) = name
            .strip_suffix(".hnsw.graph")
            .or_else(|| name.strip_suffix(".hnsw.data"))
        else {
            continue;
        };
        if base.starts_with(DUMP_PREFIX)
            && Some(base) != keep
            && let Err(err) = fs::remove_file(e.path())
        {
            tracing::warn!(path = %e.path().display(), %err, "could not remove old HNSW dump");
        }
    }
}

fn stamp(path: &Path) -> Result<FileStamp, IndexError> {
    let mut f = fs::File::open(path).map_err(|e| io_err(path, e))?;
    let mut h = Checksum::default();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| io_err(path, e))?;
        if n == 0 {
            break;
        }
        len += n as u64;
        h.update(&buf[..n]);
    }
    Ok(FileStamp {
        len,
        sum: h.finish(),
    })
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut h = Checksum::default();
    h.update(bytes);
    h.finish()
}

/// Fast non-cryptographic streaming checksum (detects truncation and corruption, not attacks).
/// Four independent multiply-rotate lanes over 8-byte words: several GB/s, so checking a
/// 150 MB dump costs a small fraction of hnsw_rs's reload time. Chunk boundaries do not matter:
/// pending bytes are carried over between `update` calls.
#[derive(Debug, Default)]
struct Checksum {
    lanes: [u64; 4],
    pending: Vec<u8>,
    words: u64,
    total: u64,
}

impl Checksum {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;

    fn mix_word(&mut self, w: u64) {
        let lane = (self.words & 3) as usize;
        self.lanes[lane] = (self.lanes[lane] ^ w).wrapping_mul(Self::K).rotate_left(29);
        self.words += 1;
    }

    fn update(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if !self.pending.is_empty() {
            let take = (8 - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() == 8 {
                let mut a = [0u8; 8];
                a.copy_from_slice(&self.pending);
                self.pending.clear();
                self.mix_word(u64::from_le_bytes(a));
            }
        }
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.mix_word(u64::from_le_bytes(a));
        }
        self.pending.extend_from_slice(chunks.remainder());
    }

    fn finish(mut self) -> u64 {
        let mut tail = [0u8; 8];
        tail[..self.pending.len()].copy_from_slice(&self.pending);
        let t = u64::from_le_bytes(tail);
        self.mix_word(t);
        let mut h = self.total.wrapping_mul(Self::K);
        for l in self.lanes {
            h = (h ^ l).wrapping_mul(Self::K).rotate_left(31);
        }
        h ^ (h >> 29)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memctl_engine::HashEmbedder;
    use memctl_engine::TextGen;

    fn build(n: usize, seed: u64) -> (HnswIndex, EmbedderId, Vec<Vec<f32>>) {
        let e = HashEmbedder::new();
        let id = memctl_engine::Embedder::id(&e).clone();
        let mut g = TextGen::new(seed);
        let vs: Vec<Vec<f32>> = (0..n).map(|_| e.embed_one(&g.document())).collect();
        let mut idx = HnswIndex::new(id.clone(), HnswParams::default());
        let items: Vec<(u64, &[f32])> = vs
            .iter()
            .enumerate()
            .map(|(i, v)| (i as u64 * 3, v.as_slice()))
            .collect();
        idx.insert_batch(&id, &items).unwrap();
        (idx, id, vs)
    }

    #[test]
    fn checksum_is_chunking_independent() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let whole = checksum(&data);
        for split in [0, 1, 3, 7, 8, 9, 500, 999, 1000] {
            let mut h = Checksum::default();
            h.update(&data[..split]);
            h.update(&data[split..]);
            assert_eq!(h.finish(), whole, "split {split}");
        }
        let mut other = data.clone();
        other[500] ^= 1;
        assert_ne!(checksum(&other), whole);
        assert_ne!(checksum(&data[..999]), whole);
    }

    #[test]
    fn save_load_round_trip_keeps_ids_tombstones_generation() {
        let (mut idx, id, vs) = build(300, 11);
        idx.remove(3);
        idx.insert(&id, 6, &vs[0]).unwrap(); // replace id 6 with vector 0
        idx.set_generation(42);
        let dir = tempfile::tempdir().unwrap();
        idx.save(dir.path()).unwrap();
        // Saving twice must work (hnsw_rs never overwrites; we pick fresh names and clean up).
        idx.save(dir.path()).unwrap();
        let dumps = fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".hnsw.data")
            })
            .count();
        assert_eq!(dumps, 1, "old dumps are removed");

        let loaded = HnswIndex::load(dir.path(), &id).unwrap();
        assert_eq!(loaded.generation(), 42);
        assert_eq!(loaded.len(), idx.len());
        for (i, v) in vs.iter().enumerate().take(50) {
            let a = idx.search(&id, v, 5).unwrap();
            let b = loaded.search(&id, v, 5).unwrap();
            assert_eq!(a, b, "query {i}");
            assert!(b.iter().all(|h| h.id != 3));
        }
        let top = loaded.search(&id, &vs[0], 2).unwrap();
        assert!(
            top.iter().any(|h| h.id == 6) && top.iter().any(|h| h.id == 0),
            "{top:?}"
        );
        // A loaded index keeps accepting inserts and can be saved again.
        let mut loaded = loaded;
        loaded.insert(&id, 100_000, &vs[1]).unwrap();
        loaded.save(dir.path()).unwrap();
        let again = HnswIndex::load(dir.path(), &id).unwrap();
        assert_eq!(again.len(), idx.len() + 1);
    }

    #[test]
    fn load_refuses_other_embedder_and_corruption() {
        let (idx, id, _) = build(100, 12);
        let dir = tempfile::tempdir().unwrap();
        idx.save(dir.path()).unwrap();
        let other = EmbedderId::new("other", "v1", id.dims);
        assert!(matches!(
            HnswIndex::load(dir.path(), &other),
            Err(IndexError::EmbedderMismatch { .. })
        ));

        // Truncate the data file: refused before hnsw_rs sees it.
        let data = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(".hnsw.data"))
            .unwrap();
        let bytes = fs::read(&data).unwrap();
        fs::write(&data, &bytes[..bytes.len() / 2]).unwrap();
        assert!(matches!(
            HnswIndex::load(dir.path(), &id),
            Err(IndexError::Corrupt(_))
        ));
        fs::write(&data, &bytes).unwrap();
        HnswIndex::load(dir.path(), &id).unwrap();

        // Flip a sidecar byte.
        let meta = dir.path().join(SIDECAR);
        let mut m = fs::read(&meta).unwrap();
        let last = m.len() - 1;
        m[last] ^= 0xff;
        fs::write(&meta, &m).unwrap();
        assert!(matches!(
            HnswIndex::load(dir.path(), &id),
            Err(IndexError::Corrupt(_))
        ));
        fs::write(&meta, &m[..10]).unwrap();
        assert!(matches!(
            HnswIndex::load(dir.path(), &id),
            Err(IndexError::Corrupt(_))
        ));
        fs::remove_file(&meta).unwrap();
        assert!(matches!(
            HnswIndex::load(dir.path(), &id),
            Err(IndexError::Io { .. })
        ));
    }

    #[test]
    fn empty_index_round_trips() {
        let id = EmbedderId::new("t", "v1", 4);
        let idx = HnswIndex::new(id.clone(), HnswParams::default());
        let dir = tempfile::tempdir().unwrap();
        idx.save(dir.path()).unwrap();
        let mut l = HnswIndex::load(dir.path(), &id).unwrap();
        assert!(l.is_empty());
        l.insert(&id, 1, &[1.0, 0.0, 0.0, 0.0]).unwrap();
        assert_eq!(l.search(&id, &[1.0, 0.0, 0.0, 0.0], 1).unwrap()[0].id, 1);
    }

    #[test]
    fn needs_rebuild_after_many_removals() {
        let (mut idx, id, vs) = build(200, 13);
        assert!(!idx.needs_rebuild());
        for i in 0..60u64 {
            idx.remove(i * 3);
        }
        assert!(idx.needs_rebuild());
        assert_eq!(idx.len(), 140);
        // Heavy tombstoning still returns k live hits.
        let hits = idx.search(&id, &vs[0], 10).unwrap();
        assert_eq!(hits.len(), 10);
        assert!(hits.iter().all(|h| h.id >= 180));
    }
}
