//! A project's index on disk, beside the store (`<data dir>/ann/`): the tail graph as hnsw_rs's
//! dump (`.graph`, `.data`), the frozen base as a flat file (`.flat`, [`FlatGraph::save`]:
//! its own CRC), and our sidecar (`p<project>.meta`: the tail's chunk ids and tombstones, the
//! base's file name, the store position the index reflects, and a length and CRC of each dump
//! file, because hnsw_rs's loader asserts and unwraps on bad input).
//!
//! Crash safety: the dump and a new base go to fresh names, then the sidecar is written to a
//! temporary file and renamed over the old one, then older files are removed; a crash leaves
//! the old or the new index loadable, and a file that does not match its sidecar is refused
//! (the service rebuilds from the store). Every forget removes the whole directory.

use crate::flat::FlatGraph;
use crate::graph::{Graph, GraphParams, Ids};
use crate::layered::Layered;
use crate::{AnnError, dist::DotI8};
use hnsw_rs::prelude::{AnnT, HnswIo};
use memctl_engine::BlockCursor;
use std::fs;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// The sidecar's format; a sidecar of another (an older build's) is refused, and the service
/// rebuilds from the store.
const MAGIC: [u8; 8] = *b"MCANN002";

/// What the sidecar records besides the graph.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Position {
    /// The space ([`memctl_engine::EmbedderId::key`]).
    pub space: String,
    /// The store's block epoch the graph was read under.
    pub epoch: u64,
    /// How far the graph has read the project's blocks.
    pub cursor: BlockCursor,
    /// The store's forget count when the index was saved: a service that loads the index and
    /// then sees a larger count rebuilds what holds tombstones (they may be forgotten vectors).
    pub forgets: u64,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Sidecar {
    position: Position,
    params: GraphParams,
    /// The tail's dump; None for an empty tail (hnsw_rs cannot dump one).
    tail: Option<Dump>,
    /// The base's file in the same directory, if the index has one.
    base: Option<String>,
    /// The tail's chunk per data id, and its tombstones.
    chunk: Vec<u64>,
    dead: Vec<u64>,
}

/// hnsw_rs's two dump files of the tail: their base name, and what each must hold.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Dump {
    basename: String,
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

/// Write the index of `project` to `dir` (created 0700 if missing): its tail, and its base
/// unless `base_file` names the file the base was saved to before (it is unchanged since).
/// Returns the base's file name.
pub fn save(
    dir: &Path,
    project: u32,
    index: &Layered,
    base_file: Option<&str>,
    position: &Position,
) -> Result<Option<String>, AnnError> {
    memctl_engine::ensure_private_dir(dir)?;
    let base = match (&index.base, base_file) {
        (None, _) => None,
        (Some(_), Some(name)) => Some(name.to_string()),
        (Some(b), None) => {
            let name = unused_name(dir, project, "f", &[".flat"]);
            b.save(&dir.join(&name))?;
            Some(name)
        }
    };
    let graph = &*index.tail;
    let (chunk, dead) = {
        let ids = graph.ids();
        let dead = (0..ids.dead.len() as u64)
            .filter(|&i| ids.dead[i as usize])
            .collect();
        (ids.chunk.clone(), dead)
    };
    let tail = if chunk.is_empty() {
        None
    } else {
        Some(dump(dir, project, graph, chunk.len())?)
    };
    let keep = tail
        .as_ref()
        .map(|d| d.basename.clone())
        .unwrap_or_default();
    let sidecar = Sidecar {
        position: position.clone(),
        params: graph.params,
        tail,
        base: base.clone(),
        chunk,
        dead,
    };
    let body = bincode::serde::encode_to_vec(&sidecar, bincode::config::standard())
        .map_err(|e| AnnError::Corrupt(format!("encoding the sidecar: {e}")))?;
    let mut bytes = Vec::with_capacity(body.len() + 12);
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    let meta = meta_path(dir, project);
    memctl_engine::write_private_atomic(&meta, &bytes)?;
    remove_dumps(dir, project, Some((&keep, base.as_deref())));
    Ok(base)
}

/// Dump the tail `graph` of `points` points to fresh file names.
fn dump(dir: &Path, project: u32, graph: &Graph, points: usize) -> Result<Dump, AnnError> {
    let wanted = unused_name(dir, project, "g", &[".hnsw.data", ".hnsw.graph"]);
    let dumped = catch_unwind(AssertUnwindSafe(|| graph.hnsw.file_dump(dir, &wanted)))
        .map_err(|_| AnnError::Corrupt("hnsw_rs file_dump panicked".into()))?
        .map_err(|e| AnnError::Corrupt(format!("hnsw_rs file_dump: {e}")))?;
    let graph_stamp = stamp(&dir.join(format!("{dumped}.hnsw.graph")))?;
    let data_stamp = stamp(&dir.join(format!("{dumped}.hnsw.data")))?;
    // hnsw_rs may have taken fewer points than it was asked about; the ids must match.
    if graph.hnsw.get_nb_point() != points {
        return Err(AnnError::Corrupt(
            "graph changed while it was dumped".into(),
        ));
    }
    Ok(Dump {
        basename: dumped,
        graph: graph_stamp,
        data: data_stamp,
    })
}

/// A project's saved sidecar whose dump files match it, and the live chunks of its base (the
/// tail graph itself is not loaded).
#[derive(Debug)]
pub struct SavedGraph {
    /// Where the index had read the store when it was saved.
    pub position: Position,
    sidecar: Sidecar,
    base_live: Vec<u64>,
    base_dead: usize,
}

impl SavedGraph {
    /// The chunk ids of the live points, base and tail.
    pub fn live_ids(&self) -> impl Iterator<Item = u64> + '_ {
        let dead: std::collections::HashSet<u64> = self.sidecar.dead.iter().copied().collect();
        let chunk = &self.sidecar.chunk;
        (0..chunk.len() as u64)
            .filter(move |i| !dead.contains(i))
            .map(move |i| chunk[i as usize])
            .chain(self.base_live.iter().copied())
    }

    /// How many points are tombstones, base and tail.
    pub fn tombstones(&self) -> usize {
        self.sidecar.dead.len() + self.base_dead
    }
}

/// The sidecar of `project` in `dir`, after checking that the dump files match it and that
/// its base loads; `Ok(None)` when there is none.
pub fn read_saved(dir: &Path, project: u32) -> Result<Option<SavedGraph>, AnnError> {
    let Some(sc) = read_sidecar(dir, project)? else {
        return Ok(None);
    };
    let (base_live, base_dead) = match load_base(dir, &sc)? {
        Some(b) => (
            b.live_points().into_iter().map(|(c, _)| c).collect(),
            b.dead(),
        ),
        None => (Vec::new(), 0),
    };
    Ok(Some(SavedGraph {
        position: sc.position.clone(),
        sidecar: sc,
        base_live,
        base_dead,
    }))
}

/// The sidecar of `project`, its dump files checked against it.
fn read_sidecar(dir: &Path, project: u32) -> Result<Option<Sidecar>, AnnError> {
    let meta = meta_path(dir, project);
    let bytes = match fs::read(&meta) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&meta)(e)),
    };
    let sc = parse_sidecar(&meta, &bytes)?;
    let names = sc.tail.iter().map(|d| d.basename.as_str());
    for name in names.chain(sc.base.as_deref()) {
        if name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(AnnError::Corrupt(format!("bad index file name {name:?}")));
        }
    }
    match &sc.tail {
        Some(d) => {
            for (suffix, want) in [("graph", d.graph), ("data", d.data)] {
                let p = dir.join(format!("{}.hnsw.{suffix}", d.basename));
                if stamp(&p)? != want {
                    return Err(AnnError::Corrupt(format!(
                        "{} differs from its sidecar",
                        p.display()
                    )));
                }
            }
        }
        None if !sc.chunk.is_empty() => {
            return Err(AnnError::Corrupt("tail points without a dump".into()));
        }
        None => {}
    }
    Ok(Some(sc))
}

/// The base the sidecar names (it must load: the sidecar is written after it).
fn load_base(dir: &Path, sc: &Sidecar) -> Result<Option<FlatGraph>, AnnError> {
    let Some(name) = sc.base.as_deref() else {
        return Ok(None);
    };
    let path = dir.join(name);
    match FlatGraph::load(&path)? {
        Some(b) => Ok(Some(b)),
        None => Err(AnnError::Corrupt(format!("{} is missing", path.display()))),
    }
}

/// A loaded index: its parts, the position it reflects and its base's file name.
#[derive(Debug)]
pub struct Loaded {
    /// The frozen base, if the index has one.
    pub base: Option<FlatGraph>,
    /// The live tail.
    pub tail: Graph,
    /// Where the index had read the store.
    pub position: Position,
    /// The base's file (saving the index again keeps it while the base is unchanged).
    pub base_file: Option<String>,
}

/// Read the index of `project` from `dir`; `Ok(None)` when there is none.
pub fn load(dir: &Path, project: u32) -> Result<Option<Loaded>, AnnError> {
    let Some(sc) = read_sidecar(dir, project)? else {
        return Ok(None);
    };
    let base = load_base(dir, &sc)?;
    // Files of this project the sidecar does not name (an interrupted save's) go.
    let keep = sc.tail.as_ref().map(|d| d.basename.as_str()).unwrap_or("");
    remove_dumps(dir, project, Some((keep, sc.base.as_deref())));
    let Some(d) = &sc.tail else {
        return Ok(Some(Loaded {
            base,
            tail: Graph::new(sc.params, 1024),
            position: sc.position,
            base_file: sc.base,
        }));
    };
    // hnsw_rs ties a loaded graph to its loader: one small loader is leaked per load (a
    // service loads each project once).
    let loader: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, &d.basename)));
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
    let ids = Ids::from_lists(sc.chunk, &sc.dead)?;
    let tail = Graph::from_parts(hnsw, sc.params, ids);
    Ok(Some(Loaded {
        base,
        tail,
        position: sc.position,
        base_file: sc.base,
    }))
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

/// Remove what an interrupted save can leave in `dir`: temporary files of other processes
/// (one service per data dir writes here) and the files of projects without a sidecar.
/// Best effort, like [`remove_dumps`].
pub fn remove_strays(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let own = format!(".tmp-{}", std::process::id());
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let temporary = name.contains(".tmp-") && !name.ends_with(&own);
        let orphan = project_of(name).is_some_and(|p| !meta_path(dir, p).exists());
        if (temporary || orphan)
            && let Err(err) = fs::remove_file(e.path())
        {
            tracing::warn!(path = %e.path().display(), %err, "could not remove an index file");
        }
    }
}

/// The project a file `p<project>-…` or `p<project>.meta` belongs to.
fn project_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('p')?;
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    rest[..end].parse().ok()
}

/// Remove the files of `project` (all of them, or all but the dump and the base file of
/// `keep`). Best effort: a leftover costs disk, and every forget removes the whole directory
/// anyway.
pub fn remove_dumps(dir: &Path, project: u32, keep: Option<(&str, Option<&str>)>) {
    let prefix = format!("p{project}-g");
    let flat = format!("p{project}-f");
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let base = name
            .strip_suffix(".hnsw.graph")
            .or_else(|| name.strip_suffix(".hnsw.data"));
        let dump = base.is_some_and(|b| b.starts_with(&prefix) && Some(b) != keep.map(|k| k.0));
        let old_base = name.starts_with(&flat)
            && name.ends_with(".flat")
            && Some(name) != keep.and_then(|k| k.1);
        let ours = dump || old_base || (keep.is_none() && name == format!("p{project}.meta"));
        if ours && let Err(err) = fs::remove_file(e.path()) {
            tracing::warn!(path = %e.path().display(), %err, "could not remove an index file");
        }
    }
}

/// `p<project>-<kind><n>` with the first `n` for which no file `<name><suffix>` exists (the
/// base's name carries its suffix: the sidecar names the file).
fn unused_name(dir: &Path, project: u32, kind: &str, suffixes: &[&str]) -> String {
    let name = (0u64..)
        .map(|n| format!("p{project}-{kind}{n}"))
        .find(|b| {
            !suffixes
                .iter()
                .any(|s| dir.join(format!("{b}{s}")).exists())
        })
        .unwrap_or_default();
    if kind == "f" {
        format!("{name}.flat")
    } else {
        name
    }
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
