//! Text embedders.
//!
//! Two implementations of one small trait: [`OnnxEmbedder`] (all-MiniLM-L6-v2 through ONNX
//! Runtime, the real semantic model) and [`HashEmbedder`] (deterministic feature hashing: no
//! model, microseconds per chunk, the fallback when the model or runtime is missing).
//!
//! Every vector carries the [`EmbedderId`] of the embedder that made it: hash vectors and model
//! vectors live in different spaces, so comparing across ids is an error, never a silent zero.

pub mod batch;
mod hash;
pub mod onnx;
mod priority;

pub use hash::HashEmbedder;
pub use onnx::{OnnxConfig, OnnxEmbedder};
pub use priority::lower_priority;

use crate::error::EmbedError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Identity of an embedding space: model name, version and dimension.
///
/// Two vectors are comparable only when their ids are equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EmbedderId {
    /// Model or algorithm name, e.g. `all-MiniLM-L6-v2` or `hash-ngram`.
    pub model: String,
    /// Version of the weights or algorithm, e.g. `fp32-1` or `v1`.
    pub version: String,
    /// Output dimension.
    pub dims: usize,
}

impl EmbedderId {
    /// Build an id.
    pub fn new(model: impl Into<String>, version: impl Into<String>, dims: usize) -> Self {
        Self {
            model: model.into(),
            version: version.into(),
            dims,
        }
    }

    /// A compact string key (`model@version/dims`) used in the store and in messages.
    pub fn key(&self) -> String {
        format!("{}@{}/{}", self.model, self.version, self.dims)
    }

    /// Error unless `other` is the same embedding space.
    pub fn ensure_same(&self, other: &EmbedderId) -> Result<(), crate::error::IndexError> {
        if self == other {
            Ok(())
        } else {
            Err(crate::error::IndexError::EmbedderMismatch {
                expected: self.key(),
                got: other.key(),
            })
        }
    }
}

impl fmt::Display for EmbedderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key())
    }
}

/// Turns texts into L2-normalized vectors of a fixed dimension.
pub trait Embedder: Send + Sync + fmt::Debug {
    /// The embedding space this embedder produces.
    fn id(&self) -> &EmbedderId;

    /// Embed a batch of texts. The output has one L2-normalized vector per input, in order.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// Embed one text.
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.embed_batch(&[text])?;
        v.pop()
            .ok_or_else(|| EmbedError::Runtime("empty batch output".into()))
    }

    /// Output dimension.
    fn dims(&self) -> usize {
        self.id().dims
    }
}

/// L2-normalize in place; a zero vector stays zero.
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v.iter_mut() {
            *x /= norm;
        }
    }
}

/// Dot product (cosine similarity for normalized vectors).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Vectors of texts and the space they are in.
#[derive(Debug, Clone)]
pub struct Embedded {
    /// The embedder that made them (the model, or the hash fallback).
    pub embedder: EmbedderId,
    /// One vector per text, in order.
    pub vectors: Vec<Vec<f32>>,
}
