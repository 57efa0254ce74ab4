//! What ingest derives from each new chunk before storing it: its hash vector and its term
//! counts, computed on rayon's pool by a helper thread *while* the calling thread writes the
//! chunks before them.
//!
//! Why: the write transaction is one thread's work by nature (one redb writer), and a first
//! archive of a long history spent about a third of its wall time there with the other core
//! idle, after having waited for all vectors and counts. Blocks of chunks flow
//! through a small bounded channel, in order, so both overlap and memory stays bounded.

use crate::embed::HashEmbedder;
use crate::index::lexical::term_frequencies;
use rayon::prelude::*;
use std::sync::mpsc::{Receiver, sync_channel};

/// A chunk's hash vector and its term frequencies.
pub(super) type Derived = (Vec<f32>, Vec<(String, u32)>);

/// Chunks per block sent from the helper thread.
const BLOCK: usize = 64;

/// Below this many chunks (a hook's usual few new turns) everything is derived up front on
/// the calling thread's pool call: no helper thread.
const PIPELINE_MIN: usize = 2 * BLOCK;

fn derive(hash: &HashEmbedder, text: &str) -> Derived {
    (hash.embed_one(text), term_frequencies(text))
}

/// The derived values of `texts`, handed out in order by [`DerivedSource::next`].
#[derive(Debug)]
pub(super) struct DerivedSource<'a> {
    hash: &'a HashEmbedder,
    rx: Option<Receiver<Vec<Derived>>>,
    ready: std::vec::IntoIter<Derived>,
}

impl DerivedSource<'_> {
    /// The derived values of the next text; `text` is that text, derived here if the helper
    /// thread stopped early (it only stops early by panicking, which the scope re-raises).
    pub(super) fn next(&mut self, text: &str) -> Derived {
        loop {
            if let Some(d) = self.ready.next() {
                return d;
            }
            match self.rx.as_ref().map(Receiver::recv) {
                Some(Ok(block)) => self.ready = block.into_iter(),
                Some(Err(_)) | None => {
                    self.rx = None;
                    return derive(self.hash, text);
                }
            }
        }
    }
}

/// Run `write` with a [`DerivedSource`] over `texts` (see the module doc); its result is
/// returned once the helper thread has finished.
pub(super) fn with_derived<R>(
    hash: &HashEmbedder,
    texts: &[&str],
    write: impl FnOnce(&mut DerivedSource<'_>) -> R,
) -> R {
    if texts.len() < PIPELINE_MIN {
        let all: Vec<Derived> = texts.par_iter().map(|t| derive(hash, t)).collect();
        return write(&mut DerivedSource {
            hash,
            rx: None,
            ready: all.into_iter(),
        });
    }
    let (tx, rx) = sync_channel::<Vec<Derived>>(2);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for block in texts.chunks(BLOCK) {
                let out: Vec<Derived> = block.par_iter().map(|t| derive(hash, t)).collect();
                // The writer stopped (its transaction failed): nothing more is needed.
                if tx.send(out).is_err() {
                    break;
                }
            }
        });
        write(&mut DerivedSource {
            hash,
            rx: Some(rx),
            ready: Vec::new().into_iter(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| format!("turn {i}: cargo test HnswIndex::load engine/src/index{i}.rs"))
            .collect()
    }

    /// In order and equal to deriving each text directly, below and above the pipeline
    /// threshold and across block edges.
    #[test]
    fn hands_out_each_texts_values_in_order() {
        let hash = HashEmbedder::new();
        for n in [0, 1, PIPELINE_MIN - 1, PIPELINE_MIN, 5 * BLOCK + 3] {
            let owned = texts(n);
            let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
            let got = with_derived(&hash, &refs, |src| {
                refs.iter().map(|t| src.next(t)).collect::<Vec<_>>()
            });
            let want: Vec<Derived> = refs.iter().map(|t| derive(&hash, t)).collect();
            assert_eq!(got, want, "n = {n}");
        }
    }

    /// A writer that stops early (failed transaction) does not hang the helper thread.
    #[test]
    fn writer_stopping_early_ends_the_helper() {
        let hash = HashEmbedder::new();
        let owned = texts(20 * BLOCK);
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        let first = with_derived(&hash, &refs, |src| src.next(refs[0]));
        assert_eq!(first, derive(&hash, refs[0]));
    }

    /// Past the helper's end (or without one) the given text is derived on the spot.
    #[test]
    fn falls_back_to_deriving_here() {
        let hash = HashEmbedder::new();
        let mut src = DerivedSource {
            hash: &hash,
            rx: None,
            ready: Vec::new().into_iter(),
        };
        assert_eq!(src.next("cargo build"), derive(&hash, "cargo build"));
    }
}
