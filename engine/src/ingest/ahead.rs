//! The next pass's bytes, read and parsed on a helper thread while this pass writes.
//!
//! Why: a pass is read → parse → write, and the write is one thread's work (one redb writer)
//! while parsing runs on every core. In a 5,000-turn first archive (five 16 MiB passes) one core
//! idled for a third of the write phase while the parse of the next pass waited behind it.
//! The parse of pass `k + 1` starts from the chunker state pass `k` is about to
//! commit, so it is used only when pass `k + 1` starts from exactly that state, in the same
//! file: when another process moved the cursor meanwhile, it is dropped and the pass reads as
//! usual.

use crate::transcript::{Batch, Chunker};
use std::fs::File;

/// A pass parsed ahead of time.
#[derive(Debug)]
pub(super) struct Ahead {
    /// Where its bytes start (the chunker's resume offset before the feed).
    start: u64,
    /// The encoded chunker state it started from.
    state_before: Vec<u8>,
    /// (device, inode) of the file read.
    identity: (u64, u64),
    /// The chunker after the feed.
    pub chunker: Chunker,
    /// What the feed returned.
    pub batch: Batch,
    /// Bytes read (and fed).
    pub bytes_read: u64,
}

/// A parse running on its helper thread.
#[derive(Debug)]
pub(super) struct Parsing(std::thread::JoinHandle<Option<Ahead>>);

impl Parsing {
    /// Read up to `want` bytes of `file` from `chunker`'s resume offset and feed a copy of
    /// `chunker` with them, on a new thread. `state` is the encoded state of `chunker`. `None`
    /// when no thread (or file handle) could be had: the next pass then reads as usual.
    pub(super) fn spawn(
        file: &File,
        identity: (u64, u64),
        chunker: &Chunker,
        state: Vec<u8>,
        want: u64,
    ) -> Option<Self> {
        let file = file.try_clone().ok()?;
        let mut chunker = chunker.clone();
        let start = chunker.state().resume_offset;
        let want = usize::try_from(want).ok()?;
        std::thread::Builder::new()
            .name("memctl-ingest-ahead".into())
            .spawn(move || {
                let bytes = read_at(&file, start, want).ok()?;
                let batch = chunker.feed(&bytes);
                Some(Ahead {
                    start,
                    state_before: state,
                    identity,
                    chunker,
                    batch,
                    bytes_read: bytes.len() as u64,
                })
            })
            .ok()
            .map(Self)
    }

    /// The parsed pass, when it starts at `start` from the chunker state `state` in the file
    /// `identity` (see the module doc); `None` otherwise, or when the thread failed.
    pub(super) fn take(self, start: u64, state: &[u8], identity: (u64, u64)) -> Option<Ahead> {
        let a = self.0.join().ok()??;
        (a.start == start && a.state_before == state && a.identity == identity).then_some(a)
    }
}

/// Up to `want` bytes of `file` from `offset` (fewer at its end), without moving the file
/// position that the pass's own handle shares.
#[cfg(unix)]
fn read_at(file: &File, offset: u64, want: usize) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; want];
    let mut n = 0;
    while n < want {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(n);
    Ok(buf)
}

/// No positional reads here: no parse ahead (the pass reads as usual).
#[cfg(not(unix))]
fn read_at(_file: &File, _offset: u64, _want: usize) -> std::io::Result<Vec<u8>> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::ChunkerConfig;
    use std::path::PathBuf;

    fn fixture() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/transcripts/generated/gen-seed185-turns24-split.jsonl")
    }

    fn state(c: &Chunker) -> Vec<u8> {
        super::super::encode_state(c.state())
    }

    /// Fed from the middle of a file (the second of two passes), the parse ahead equals the
    /// pass read and fed on the spot, and it is handed out only for the state, offset and file
    /// it started from.
    #[test]
    fn the_parse_ahead_equals_the_pass_and_is_used_only_where_it_started() {
        let bytes = std::fs::read(fixture()).expect("fixture");
        let half = bytes.len() / 2;
        let mut first = Chunker::new(ChunkerConfig::default(), "s");
        first.feed(&bytes[..half]);
        let from = first.state().resume_offset;
        assert!(
            from > 0 && (from as usize) < bytes.len(),
            "the cut is mid-file"
        );
        let mut direct = first.clone();
        let want_batch = direct.feed(&bytes[from as usize..]);

        let file = File::open(fixture()).expect("open");
        let id = (1, 2);
        let spawn = || {
            Parsing::spawn(
                &file,
                id,
                &first,
                state(&first),
                (bytes.len() - from as usize) as u64,
            )
            .expect("thread")
        };
        let got = spawn().take(from, &state(&first), id).expect("used");
        assert_eq!(got.batch, want_batch);
        assert_eq!(state(&got.chunker), state(&direct));
        assert_eq!(got.bytes_read, bytes.len() as u64 - from);

        assert!(
            spawn().take(from + 1, &state(&first), id).is_none(),
            "other offset"
        );
        assert!(
            spawn().take(from, &state(&direct), id).is_none(),
            "other state"
        );
        assert!(
            spawn().take(from, &state(&first), (1, 3)).is_none(),
            "other file"
        );
    }

    /// A read stops at the end of the file, whatever was asked.
    #[test]
    fn reads_stop_at_the_end_of_the_file() {
        let file = File::open(fixture()).expect("open");
        let len = file.metadata().expect("meta").len();
        let got = read_at(&file, len - 10, 1 << 20).expect("read");
        assert_eq!(got.len(), 10);
        assert!(read_at(&file, len + 5, 100).expect("read").is_empty());
    }
}
