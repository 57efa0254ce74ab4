//! A [`FlatGraph`] on disk: one file, `MAGIC`, the length of a bincode header, the header
//! (parameters and the length of every section), the sections as raw little-endian arrays,
//! and a CRC-32 of everything before it.
//!
//! The file is written to a temporary name and renamed, so a crash leaves the old file or the
//! new one. A load checks the file's length against its header before it allocates, reads each
//! section straight into its buffer (no second copy of the file in memory), checks the CRC,
//! then the structure (every offset and id in range), so a damaged or crafted file is
//! `AnnError::Corrupt` and never a panic in a later search.

use super::{FlatGraph, Upper};
use crate::AnnError;
use crate::graph::{GraphParams, Ids};
use std::fs;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

const MAGIC: [u8; 8] = *b"MCFLAT01";
/// Elements converted per read or write of a section.
const BATCH: usize = 1 << 16;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Header {
    params: GraphParams,
    dim: u64,
    points: u64,
    entry: Option<(u32, u8)>,
    nbrs: u64,
    upper_points: u64,
    upper_rows: u64,
    upper_nbrs: u64,
    dead: u64,
}

impl Header {
    /// Bytes of the sections, None on overflow.
    fn body_len(&self) -> Option<u64> {
        let u32s = (self.points + 1)
            .checked_add(self.nbrs)?
            .checked_add(2 * self.upper_points + 1)?
            .checked_add(self.upper_rows + 1)?
            .checked_add(self.upper_nbrs)?;
        let u64s = self.points.checked_add(self.dead)?;
        self.dim
            .checked_mul(self.points)?
            .checked_add(u32s.checked_mul(4)?)?
            .checked_add(u64s.checked_mul(8)?)
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> AnnError + '_ {
    move |source| AnnError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn corrupt(path: &Path, what: &str) -> AnnError {
    AnnError::Corrupt(format!("{}: {what}", path.display()))
}

/// A writer that hashes what it writes.
struct HashWrite<W> {
    inner: W,
    crc: crc32fast::Hasher,
}

impl<W: Write> HashWrite<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.crc.update(bytes);
        self.inner.write_all(bytes)
    }

    fn u32s(&mut self, xs: &[u32]) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(4 * BATCH.min(xs.len()));
        for part in xs.chunks(BATCH) {
            buf.clear();
            buf.extend(part.iter().flat_map(|x| x.to_le_bytes()));
            self.put(&buf)?;
        }
        Ok(())
    }

    fn u64s(&mut self, xs: &[u64]) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(8 * BATCH.min(xs.len()));
        for part in xs.chunks(BATCH) {
            buf.clear();
            buf.extend(part.iter().flat_map(|x| x.to_le_bytes()));
            self.put(&buf)?;
        }
        Ok(())
    }

    fn i8s(&mut self, xs: &[i8]) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(BATCH.min(xs.len()));
        for part in xs.chunks(BATCH) {
            buf.clear();
            buf.extend(part.iter().map(|&x| x as u8));
            self.put(&buf)?;
        }
        Ok(())
    }
}

/// A reader that hashes what it reads.
struct HashRead<R> {
    inner: R,
    crc: crc32fast::Hasher,
}

impl<R: Read> HashRead<R> {
    fn take(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        self.inner.read_exact(buf)?;
        self.crc.update(buf);
        Ok(())
    }

    fn u32s(&mut self, n: u64) -> std::io::Result<Vec<u32>> {
        let n = usize::try_from(n).map_err(|_| std::io::ErrorKind::InvalidData)?;
        let mut out = Vec::with_capacity(n);
        let mut buf = vec![0u8; 4 * BATCH.min(n)];
        while out.len() < n {
            let m = BATCH.min(n - out.len());
            let b = &mut buf[..4 * m];
            self.take(b)?;
            out.extend(
                b.chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
        }
        Ok(out)
    }

    fn u64s(&mut self, n: u64) -> std::io::Result<Vec<u64>> {
        let n = usize::try_from(n).map_err(|_| std::io::ErrorKind::InvalidData)?;
        let mut out = Vec::with_capacity(n);
        let mut buf = vec![0u8; 8 * BATCH.min(n)];
        while out.len() < n {
            let m = BATCH.min(n - out.len());
            let b = &mut buf[..8 * m];
            self.take(b)?;
            out.extend(b.chunks_exact(8).map(|c| {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                u64::from_le_bytes(a)
            }));
        }
        Ok(out)
    }

    fn i8s(&mut self, n: u64) -> std::io::Result<Vec<i8>> {
        let n = usize::try_from(n).map_err(|_| std::io::ErrorKind::InvalidData)?;
        let mut out = Vec::with_capacity(n);
        let mut buf = vec![0u8; BATCH.min(n)];
        while out.len() < n {
            let m = BATCH.min(n - out.len());
            let b = &mut buf[..m];
            self.take(b)?;
            out.extend(b.iter().map(|&x| x as i8));
        }
        Ok(out)
    }
}

impl FlatGraph {
    /// Write the copy to `path` (its directory created 0700 if missing; the file 0600).
    pub fn save(&self, path: &Path) -> Result<(), AnnError> {
        let dir = path.parent().unwrap_or(Path::new("."));
        memctl_engine::ensure_private_dir(dir)?;
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp-{}", std::process::id()));
        let tmp = std::path::PathBuf::from(tmp);
        let written = self.write_to(&tmp);
        if written.is_err()
            && let Err(e) = fs::remove_file(&tmp)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            // The write's own error is returned; the leftover costs disk until the next forget
            // or a save under the same name.
            tracing::warn!(path = %tmp.display(), error = %e, "a partial index file stayed");
        }
        written?;
        memctl_engine::restrict_file(&tmp)?;
        fs::rename(&tmp, path).map_err(io(path))
    }

    fn write_to(&self, tmp: &Path) -> Result<(), AnnError> {
        let ids = self.ids();
        let dead: Vec<u64> = (0..ids.dead.len() as u64)
            .filter(|&i| ids.dead[i as usize])
            .collect();
        let header = Header {
            params: self.params,
            dim: self.dim as u64,
            points: ids.chunk.len() as u64,
            entry: self.entry,
            nbrs: self.nbrs.len() as u64,
            upper_points: self.upper.ids.len() as u64,
            upper_rows: self.upper.offsets.len().saturating_sub(1) as u64,
            upper_nbrs: self.upper.nbrs.len() as u64,
            dead: dead.len() as u64,
        };
        let head = bincode::serde::encode_to_vec(&header, bincode::config::standard())
            .map_err(|e| AnnError::Corrupt(format!("encoding the header: {e}")))?;
        let file = fs::File::create(tmp).map_err(io(tmp))?;
        let mut w = HashWrite {
            inner: BufWriter::with_capacity(1 << 20, file),
            crc: crc32fast::Hasher::new(),
        };
        let body = |w: &mut HashWrite<BufWriter<fs::File>>| -> std::io::Result<()> {
            w.put(&MAGIC)?;
            w.put(&(head.len() as u32).to_le_bytes())?;
            w.put(&head)?;
            w.i8s(&self.vectors)?;
            w.u32s(&self.offsets)?;
            w.u32s(&self.nbrs)?;
            w.u32s(&self.upper.ids)?;
            w.u32s(&self.upper.first)?;
            w.u32s(&self.upper.offsets)?;
            w.u32s(&self.upper.nbrs)?;
            w.u64s(&ids.chunk)?;
            w.u64s(&dead)?;
            let crc = w.crc.clone().finalize();
            w.inner.write_all(&crc.to_le_bytes())?;
            w.inner.flush()?;
            w.inner.get_ref().sync_all()
        };
        body(&mut w).map_err(io(tmp))
    }

    /// Read a copy written by [`Self::save`]; `Ok(None)` when there is no file.
    pub fn load(path: &Path) -> Result<Option<Self>, AnnError> {
        let file = match fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(path)(e)),
        };
        let len = file.metadata().map_err(io(path))?.len();
        let mut r = HashRead {
            inner: BufReader::with_capacity(1 << 20, file),
            crc: crc32fast::Hasher::new(),
        };
        let eof = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidData => {
                corrupt(path, "truncated")
            }
            _ => io(path)(e),
        };
        let mut pre = [0u8; 12];
        r.take(&mut pre).map_err(eof)?;
        if pre[..8] != MAGIC {
            return Err(corrupt(path, "bad header"));
        }
        let head_len = u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]);
        if u64::from(head_len) + 16 > len {
            return Err(corrupt(path, "truncated"));
        }
        let mut head = vec![0u8; head_len as usize];
        r.take(&mut head).map_err(eof)?;
        let config = bincode::config::standard().with_limit::<{ 1 << 16 }>();
        let (h, _): (Header, usize) = bincode::serde::decode_from_slice(&head, config)
            .map_err(|e| corrupt(path, &format!("header: {e}")))?;
        // The length first: a damaged count must not allocate what the file does not hold.
        if h.body_len()
            .and_then(|b| b.checked_add(u64::from(head_len) + 16))
            != Some(len)
        {
            return Err(corrupt(path, "length differs from its header"));
        }
        let g = read_body(&mut r, &h).map_err(eof)?;
        let want = r.crc.clone().finalize();
        let mut crc = [0u8; 4];
        r.inner.read_exact(&mut crc).map_err(eof)?;
        if u32::from_le_bytes(crc) != want {
            return Err(corrupt(path, "checksum mismatch"));
        }
        let (vectors, offsets, nbrs, upper, chunk, dead) = g;
        let ids = Ids::from_lists(chunk, &dead)?;
        let flat = Self::from_parts(
            h.params,
            h.dim as usize,
            vectors,
            (offsets, nbrs),
            upper,
            h.entry,
            ids,
        );
        check(&flat).map_err(|e| corrupt(path, &e.to_string()))?;
        Ok(Some(flat))
    }
}

type Body = (Vec<i8>, Vec<u32>, Vec<u32>, Upper, Vec<u64>, Vec<u64>);

fn read_body<R: Read>(r: &mut HashRead<R>, h: &Header) -> std::io::Result<Body> {
    let vectors = r.i8s(h.dim * h.points)?;
    let offsets = r.u32s(h.points + 1)?;
    let nbrs = r.u32s(h.nbrs)?;
    let upper = Upper {
        ids: r.u32s(h.upper_points)?,
        first: r.u32s(h.upper_points + 1)?,
        offsets: r.u32s(h.upper_rows + 1)?,
        nbrs: r.u32s(h.upper_nbrs)?,
    };
    let chunk = r.u64s(h.points)?;
    let dead = r.u64s(h.dead)?;
    Ok((vectors, offsets, nbrs, upper, chunk, dead))
}

/// `offsets` starts at 0, never decreases and ends at `len`.
fn csr_ok(offsets: &[u32], len: usize) -> bool {
    offsets.first() == Some(&0)
        && offsets.windows(2).all(|w| w[0] <= w[1])
        && offsets.last().map(|&x| x as usize) == Some(len)
}

/// The invariants a search indexes by: every offset within its array, every id a point.
pub(super) fn check(g: &FlatGraph) -> Result<(), AnnError> {
    let n = g.ids().chunk.len();
    let bad = |what: &str| Err(AnnError::Corrupt(format!("flat graph: {what}")));
    if g.vectors.len() != n * g.dim || g.offsets.len() != n + 1 {
        return bad("sizes differ from the point count");
    }
    if n > 0 && g.dim == 0 {
        return bad("points of no bytes");
    }
    if !csr_ok(&g.offsets, g.nbrs.len()) || g.nbrs.iter().any(|&x| x as usize >= n) {
        return bad("layer 0 out of range");
    }
    let up = &g.upper;
    let rows = up.offsets.len().saturating_sub(1);
    if up.ids.windows(2).any(|w| w[0] >= w[1])
        || up.ids.iter().any(|&x| x as usize >= n)
        || up.first.len() != up.ids.len() + 1
        || !csr_ok(&up.first, rows)
        || !csr_ok(&up.offsets, up.nbrs.len())
        || up.nbrs.iter().any(|&x| x as usize >= n)
    {
        return bad("upper layers out of range");
    }
    if g.entry.is_some_and(|(e, _)| e as usize >= n) {
        return bad("entry point out of range");
    }
    Ok(())
}
