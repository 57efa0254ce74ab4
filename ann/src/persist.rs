//! A project's graph on disk, beside the store (`<data dir>/ann/`): hnsw_rs's dump (`.graph`,
//! `.data`) and our sidecar (`p<project>.meta`: chunk ids, tombstones, the store position the
//! graph reflects, and a length and CRC of each dump file, because hnsw_rs's loader asserts and
//! unwraps on bad input).
//!
//! Crash safety: the dump goes to a fresh base name, then the sidecar is written to a
//! temporary file and renamed over the old one, then older dumps are removed; a crash leaves
//! the old or the new graph loadable, and a file that does not match its sidecar is refused
//! (the service rebuilds from the store). Every forget removes the whole directory.

use crate::graph::{Graph, GraphParams, Ids};
use crate::{AnnError, dist::DotI8};
use hnsw_rs::prelude::{AnnT, HnswIo};
use memctl_engine::BlockCursor;
use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

const MAGIC: [u8; 8] = *b"MCANN001";

/// What the sidecar records besides the graph.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Position {
    /// The space ([`memctl_engine::EmbedderId::key`]).
    pub space: String,
    /// The store's block epoch the graph was read under.
    pub epoch: u64,
    /// How far the graph has read the project's blocks.
    pub cursor: BlockCursor,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Sidecar {
    position: Position,
    params: GraphParams,
    basename: String,
    chunk: Vec<u64>,
    dead: Vec<u64>,
    graph: Stamp,
    data: Stamp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Stamp {
    len: u64,
    crc: u32,
}

fn meta_path(dir: &Path, project: u32) -> PathBuf {
    dir.join(format!("p{project}.meta"))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> AnnError + '_ {
    move |source| AnnError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Write `graph` of `project` to `dir` (created 0700 if missing).
pub fn save(dir: &Path, project: u32, graph: &Graph, position: &Position) -> Result<(), AnnError> {
    memctl_engine::ensure_private_dir(dir)?;
    let (chunk, dead) = {
        let ids = graph.ids();
        let dead = (0..ids.dead.len() as u64)
            .filter(|&i| ids.dead[i as usize])
            .collect();
        (ids.chunk.clone(), dead)
    };
    let wanted = unused_basename(dir, project);
    let dumped = catch_unwind(AssertUnwindSafe(|| graph.hnsw.file_dump(dir, &wanted)))
        .map_err(|_| AnnError::Corrupt("hnsw_rs file_dump panicked".into()))?
        .map_err(|e| AnnError::Corrupt(format!("hnsw_rs file_dump: {e}")))?;
    let graph_stamp = stamp(&dir.join(format!("{dumped}.hnsw.graph")))?;
    let data_stamp = stamp(&dir.join(format!("{dumped}.hnsw.data")))?;
    // hnsw_rs may have taken fewer points than it was asked about; the ids must match.
    if graph.hnsw.get_nb_point() != chunk.len() {
        return Err(AnnError::Corrupt(
            "graph changed while it was dumped".into(),
        ));
    }
    let sidecar = Sidecar {
        position: position.clone(),
        params: graph.params,
        basename: dumped.clone(),
        chunk,
        dead,
        graph: graph_stamp,
        data: data_stamp,
    };
    let body = bincode::serde::encode_to_vec(&sidecar, bincode::config::standard())
        .map_err(|e| AnnError::Corrupt(format!("encoding the sidecar: {e}")))?;
    let mut bytes = Vec::with_capacity(body.len() + 12);
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    let meta = meta_path(dir, project);
    memctl_engine::write_private_atomic(&meta, &bytes)?;
    remove_dumps(dir, project, Some(&dumped));
    Ok(())
}

/// A project's saved sidecar whose dump files match it (the graph itself is not loaded).
#[derive(Debug)]
pub struct SavedGraph {
    /// Where the graph had read the store when it was saved.
    pub position: Position,
    sidecar: Sidecar,
}

impl SavedGraph {
    /// The chunk ids of the live points.
    pub fn live_ids(&self) -> impl Iterator<Item = u64> + '_ {
        let dead: std::collections::HashSet<u64> = self.sidecar.dead.iter().copied().collect();
        let chunk = &self.sidecar.chunk;
        (0..chunk.len() as u64)
            .filter(move |i| !dead.contains(i))
            .map(move |i| chunk[i as usize])
    }

    /// How many points are tombstones.
    pub fn tombstones(&self) -> usize {
        self.sidecar.dead.len()
    }
}

/// The sidecar of `project` in `dir`, after checking that the dump files match it;
/// `Ok(None)` when there is none.
pub fn read_saved(dir: &Path, project: u32) -> Result<Option<SavedGraph>, AnnError> {
    let meta = meta_path(dir, project);
    let bytes = match fs::read(&meta) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&meta)(e)),
    };
    let sc = parse_sidecar(&meta, &bytes)?;
    let base = &sc.basename;
    if base.contains(['/', '\\']) || base.starts_with('.') {
        return Err(AnnError::Corrupt(format!("bad dump base name {base:?}")));
    }
    for (suffix, want) in [("graph", sc.graph), ("data", sc.data)] {
        let p = dir.join(format!("{base}.hnsw.{suffix}"));
        if stamp(&p)? != want {
            return Err(AnnError::Corrupt(format!(
                "{} differs from its sidecar",
                p.display()
            )));
        }
    }
    Ok(Some(SavedGraph {
        position: sc.position.clone(),
        sidecar: sc,
    }))
}

/// Read the graph of `project` from `dir`; `Ok(None)` when there is none.
pub fn load(dir: &Path, project: u32) -> Result<Option<(Graph, Position)>, AnnError> {
    let Some(SavedGraph { sidecar: sc, .. }) = read_saved(dir, project)? else {
        return Ok(None);
    };
    let base = sc.basename.clone();
    // hnsw_rs ties a loaded graph to its loader: one small loader is leaked per load (a
    // service loads each project once).
    let loader: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, &base)));
    let hnsw = catch_unwind(AssertUnwindSafe(move || {
        let loader = loader;
        loader.load_hnsw::<i8, DotI8>()
    }))
    .map_err(|_| AnnError::Corrupt("hnsw_rs loader panicked".into()))?
    .map_err(|e| AnnError::Corrupt(format!("hnsw_rs load: {e}")))?;
    if hnsw.get_nb_point() != sc.chunk.len() {
        return Err(AnnError::Corrupt(format!(
            "dump has {} points, sidecar {}",
            hnsw.get_nb_point(),
            sc.chunk.len()
        )));
    }
    let ids = ids_of(sc.chunk, &sc.dead)?;
    Ok(Some((Graph::from_parts(hnsw, sc.params, ids), sc.position)))
}

fn parse_sidecar(meta: &Path, bytes: &[u8]) -> Result<Sidecar, AnnError> {
    if bytes.len() < 12 || bytes[..8] != MAGIC {
        return Err(AnnError::Corrupt(format!("{}: bad header", meta.display())));
    }
    let mut crc = [0u8; 4];
    crc.copy_from_slice(&bytes[8..12]);
    let body = &bytes[12..];
    if u32::from_le_bytes(crc) != crc32fast::hash(body) {
        return Err(AnnError::Corrupt(format!(
            "{}: checksum mismatch",
            meta.display()
        )));
    }
    let config = bincode::config::standard().with_limit::<{ 1 << 30 }>();
    let (sc, _): (Sidecar, usize) = bincode::serde::decode_from_slice(body, config)
        .map_err(|e| AnnError::Corrupt(format!("{}: {e}", meta.display())))?;
    Ok(sc)
}

pub(crate) fn ids_of(chunk: Vec<u64>, dead_list: &[u64]) -> Result<Ids, AnnError> {
    let mut dead = vec![false; chunk.len()];
    for &i in dead_list {
        match dead.get_mut(i as usize) {
            Some(d) => *d = true,
            None => return Err(AnnError::Corrupt(format!("tombstone {i} out of range"))),
        }
    }
    let mut live = HashMap::with_capacity(chunk.len());
    for (i, (&c, &d)) in chunk.iter().zip(&dead).enumerate() {
        if !d && live.insert(c, i).is_some() {
            return Err(AnnError::Corrupt(format!("chunk {c} live twice")));
        }
    }
    Ok(Ids {
        n_dead: dead_list.len(),
        chunk,
        dead,
        live,
    })
}

/// The projects with a sidecar in `dir`.
pub fn saved_projects(dir: &Path) -> Vec<u32> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            name.to_str()?
                .strip_prefix('p')?
                .strip_suffix(".meta")?
                .parse()
                .ok()
        })
        .collect()
}

/// Remove the files of `project` (all of them, or all but the dump `keep`). Best effort: a
/// leftover costs disk, and every forget removes the whole directory anyway.
pub fn remove_dumps(dir: &Path, project: u32, keep: Option<&str>) {
    let prefix = format!("p{project}-g");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let base = name
            .strip_suffix(".hnsw.graph")
            .or_else(|| name.strip_suffix(".hnsw.data"));
        let ours = base.is_some_and(|b| b.starts_with(&prefix) && Some(b) != keep)
            || (keep.is_none() && name == format!("p{project}.meta"));
        if ours && let Err(err) = fs::remove_file(e.path()) {
            tracing::warn!(path = %e.path().display(), %err, "could not remove an index file");
        }
    }
}

fn unused_basename(dir: &Path, project: u32) -> String {
    (0u64..)
        .map(|n| format!("p{project}-g{n}"))
        .find(|b| {
            !dir.join(format!("{b}.hnsw.data")).exists()
                && !dir.join(format!("{b}.hnsw.graph")).exists()
        })
        .unwrap_or_default()
}

fn stamp(path: &Path) -> Result<Stamp, AnnError> {
    let mut f = fs::File::open(path).map_err(io(path))?;
    let mut h = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        len += n as u64;
        h.update(&buf[..n]);
    }
    Ok(Stamp {
        len,
        crc: h.finalize(),
    })
}
