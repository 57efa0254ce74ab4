//! all-MiniLM-L6-v2 through ONNX Runtime (`ort` with `load-dynamic`).
//!
//! Why `load-dynamic`: this machine (and many users' machines) has no network at build time, so
//! ort's binary download cannot run; the runtime library comes from `scripts/setup.sh` instead
//! and is loaded with [`ort::init_from`], which returns an error (never a panic) when the file is
//! missing or too old. The engine then falls back to [`super::HashEmbedder`].
//!
//! Pipeline: tokenizer (truncation 256 = sentence-transformers' `max_seq_length`, batch-longest
//! padding, see [`super::batch`]) → model `last_hidden_state` → mean pooling over the attention
//! mask → L2 normalization. Texts are tokenized first, sorted by token count and cut into batches
//! by a token budget so padding stays small; results are put back in input order.

use super::batch::{EmbedStats, StatsCounter, plan_batches};
use super::{Embedder, EmbedderId, l2_normalize};
use crate::error::EmbedError;
use ndarray::Array2;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tokenizers::{Encoding, Tokenizer, TruncationParams, TruncationStrategy};

/// Model name shared by every all-MiniLM-L6-v2 variant.
pub const MINILM_NAME: &str = "all-MiniLM-L6-v2";
/// Output dimension of all-MiniLM-L6-v2.
pub const MINILM_DIMS: usize = 384;
/// File name of the runtime library that `scripts/setup.sh` installs.
pub const ORT_LIB_FILE: &str = "libonnxruntime.so.1.31.1";
/// Where a root keeps the fp32 model (`models/manifest.toml`'s default `dir`).
const MODEL_SUBDIR: &str = "models/all-MiniLM-L6-v2";
/// Where a root keeps the int8 model (the fp32 dir's name + `-int8`, see `query_config`).
const INT8_MODEL_SUBDIR: &str = "models/all-MiniLM-L6-v2-int8";

/// Where the runtime and model are, and how to run them.
#[derive(Debug, Clone)]
pub struct OnnxConfig {
    /// Path of `libonnxruntime.so`.
    pub dylib_path: PathBuf,
    /// Directory holding `model.onnx` and `tokenizer.json`.
    pub model_dir: PathBuf,
    /// Version tag recorded in the [`EmbedderId`] (e.g. `fp32` or `int8`); vectors of different
    /// variants are not compared.
    pub variant: String,
    /// Intra-op threads (1 by default: hooks share the machine with the agent).
    pub intra_threads: usize,
    /// Maximum tokens per text (longer texts are truncated).
    pub max_tokens: usize,
    /// Most texts per inference call.
    pub batch_size: usize,
    /// Most padded cells (texts × the batch's longest, in tokens) per inference call; see
    /// [`super::batch::plan_batches`]. Why a bound: it keeps padding and the length of one
    /// call small, so a background embedder holds a core for a short time at once.
    pub token_budget: usize,
    /// ONNX Runtime's graph optimizations at session creation. Why not always all: a process
    /// that embeds one short query (a hook) pays the session creation every time, and the
    /// optimizer is most of it (int8 file: ≈ 32 ms off vs 140–200 ms on, docs/perf/hooks.md).
    pub graph_opt: GraphOpt,
}

impl OnnxConfig {
    /// The space of the vectors this model makes (known without loading it).
    pub fn embedder_id(&self) -> EmbedderId {
        EmbedderId::new(MINILM_NAME, self.variant.clone(), MINILM_DIMS)
    }
}

/// How much ONNX Runtime optimizes the graph when it creates a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphOpt {
    /// None: the fastest start.
    Disable,
    /// Constant folding and redundant node removal only.
    Basic,
    /// Every optimization (fusions, layouts): the slowest start.
    All,
}

impl GraphOpt {
    fn level(self) -> GraphOptimizationLevel {
        match self {
            GraphOpt::Disable => GraphOptimizationLevel::Disable,
            GraphOpt::Basic => GraphOptimizationLevel::Level1,
            GraphOpt::All => GraphOptimizationLevel::Level3,
        }
    }
}

/// Default [`OnnxConfig::token_budget`]: 2 texts of 256 tokens, 4 of up to 128, 32 of up to 16.
///
/// Why so small: a batch's activations grow with its cells (the attention scores alone are
/// `texts × 12 heads × longest²` floats: 50 MB at 4,096 cells of 256-token texts), far past a
/// core's L2 cache, so big batches stream from memory. Smaller batches stay in cache, embed
/// faster, and leave the memory bus to the hook beside a background embedder. Measured on 160
/// real chunks (`memctl embed-pending --limit 160` on copies of one store, budgets alternating,
/// 2026-11-26, Intel Xeon with 2 MiB of L2 per core): one thread 16.2 chunks/s at 4,096 cells,
/// 19.5 at 1,024, 21.0 at 512, 20.9 at 256; two threads 30.3, 36.9, 36.7 (4,096 / 1,024 / 512).
pub const TOKEN_BUDGET: usize = 512;

impl OnnxConfig {
    /// A config for the given runtime library and model directory, with defaults.
    pub fn new(dylib_path: impl Into<PathBuf>, model_dir: impl Into<PathBuf>) -> Self {
        Self {
            dylib_path: dylib_path.into(),
            model_dir: model_dir.into(),
            variant: "fp32".into(),
            intra_threads: 1,
            max_tokens: 256,
            batch_size: 32,
            token_budget: TOKEN_BUDGET,
            graph_opt: GraphOpt::All,
        }
    }

    /// The config for embedding one query in a short-lived process: the int8 model file beside
    /// this one (`<model dir>-int8`, fetched by `scripts/setup.sh`) when it exists, with a fast
    /// start, labelled with **this** config's variant. Why the label: int8 and fp32 vectors of
    /// one text agree to cosine ≥ 0.998 (setup's export check), so an int8 query
    /// searches the fp32 chunk vectors as well as an fp32 one, for a fraction of the load time.
    pub fn query_config(&self) -> Self {
        let mut q = self.clone();
        let mut int8 = self.model_dir.as_os_str().to_owned();
        int8.push("-int8");
        let int8 = PathBuf::from(int8);
        if int8.join("model.onnx").is_file() && int8.join("tokenizer.json").is_file() {
            q.model_dir = int8;
        }
        q.graph_opt = GraphOpt::Disable;
        q.batch_size = 1;
        q
    }

    /// Find the runtime and model without any configuration (see [`Self::locate`]): under the
    /// data dir, else beside the executable.
    pub fn discover(data_dir: Option<&Path>) -> Self {
        let roots: Vec<&Path> = data_dir.into_iter().collect();
        Self::locate(None, None, 1, &roots)
    }

    /// The runtime and model named (`ort_dylib`, `model_dir`), else found.
    ///
    /// Runtime: `ort_dylib`, else `<root>/.cache/onnxruntime/libonnxruntime.so.1.31.1` (a
    /// checkout's `scripts/setup.sh`) or `<root>/runtime/…` (`memctl setup`). Model:
    /// `model_dir`, else `<root>/models/all-MiniLM-L6-v2`, else, in the same root,
    /// `<root>/models/all-MiniLM-L6-v2-int8`. `<root>` is, in order, each of `roots` (the
    /// settings pass `MEMCTL_HOME`, the data dir, then the machine's install dir where
    /// `memctl setup` puts them, see `Settings::install_dir`), then every ancestor of the
    /// running executable (so a binary built in a checkout finds that checkout's setup). The
    /// first root holding a model wins. Why the data dir before the machine's dir: a data dir
    /// set up by an older `memctl --data-dir D setup` keeps its own files.
    ///
    /// Why the int8 fallback: `memctl setup --int8-only` installs no fp32 model (its export
    /// needs a Python toolchain); the int8 file then embeds everything, labelled with the fp32
    /// variant for the reason [`Self::query_config`] gives (the same space, cosine ≥ 0.998), so
    /// installing the fp32 model later needs no re-embedding. A checkout holds both, and keeps
    /// the fp32 one.
    ///
    /// Returns the best guess even when files are missing; [`OnnxEmbedder::load`] reports what
    /// is missing. The settings call this (`OnnxConfig::from_settings`).
    pub fn locate(
        ort_dylib: Option<PathBuf>,
        model_dir: Option<PathBuf>,
        ort_threads: usize,
        roots: &[&Path],
    ) -> Self {
        let roots = search_roots(roots);
        let dylib = ort_dylib.unwrap_or_else(|| {
            first_existing(&roots, &[".cache/onnxruntime", "runtime"], ORT_LIB_FILE)
                .unwrap_or_else(|| PathBuf::from(ORT_LIB_FILE))
        });
        let model_dir = model_dir.unwrap_or_else(|| {
            first_existing(&roots, &[MODEL_SUBDIR, INT8_MODEL_SUBDIR], "model.onnx")
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| PathBuf::from(MODEL_SUBDIR))
        });
        let mut cfg = Self::new(dylib, model_dir);
        cfg.intra_threads = ort_threads;
        cfg
    }

    /// Path of the ONNX model file.
    pub fn model_path(&self) -> PathBuf {
        self.model_dir.join("model.onnx")
    }

    /// Path of the tokenizer file.
    pub fn tokenizer_path(&self) -> PathBuf {
        self.model_dir.join("tokenizer.json")
    }
}

fn search_roots(given: &[&Path]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = given.iter().map(|p| p.to_path_buf()).collect();
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).map(Path::to_path_buf));
    }
    roots
}

fn first_existing(roots: &[PathBuf], subdirs: &[&str], file: &str) -> Option<PathBuf> {
    roots
        .iter()
        .flat_map(|r| subdirs.iter().map(move |s| r.join(s).join(file)))
        .find(|p| p.is_file())
}

/// The process's one ONNX Runtime environment.
///
/// Why a global: ort allows a single environment per process, ever (a second `build()` fails
/// even after the first environment was dropped), so every embedder of the process shares the
/// first one. The first dylib path wins; a failure is remembered and reported again.
fn runtime_environment(dylib: &Path) -> Result<ort::environment::Environment, String> {
    static ENV: std::sync::OnceLock<Result<ort::environment::Environment, String>> =
        std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        ort::init_from(dylib)
            .map_err(|e| e.to_string())?
            .with_name("memctl")
            // No usage events from sessions. This alone does not stop the telemetry client of
            // Microsoft's builds, which starts with the environment: `ORT_DISABLE_TELEMETRY`,
            // set by the CLI before anything loads, does.
            .with_telemetry(false)
            .build()
            .map_err(|e| e.to_string())
    })
    .clone()
}

/// What was loaded, for `memctl doctor` and logs.
#[derive(Debug, Clone)]
pub struct RuntimeInfo {
    /// The runtime library path that was loaded.
    pub dylib_path: PathBuf,
    /// ONNX Runtime's build info string.
    pub build_info: String,
    /// The model file.
    pub model_path: PathBuf,
    /// Model input names, in order.
    pub inputs: Vec<String>,
    /// Seconds the load took (runtime library, session creation, tokenizer): what a process
    /// that embeds pays before its first text.
    pub load_seconds: f64,
}

/// all-MiniLM-L6-v2 on ONNX Runtime. See the module doc.
#[derive(Debug)]
pub struct OnnxEmbedder {
    id: EmbedderId,
    // `Session::run` takes `&mut self`; the mutex makes the embedder shareable across threads.
    session: Mutex<Session>,
    tokenizer: Tokenizer,
    needs_token_type_ids: bool,
    batch_size: usize,
    token_budget: usize,
    pad_id: u32,
    stats: StatsCounter,
    info: RuntimeInfo,
}

impl OnnxEmbedder {
    /// Load the runtime library, the model and the tokenizer.
    ///
    /// Errors (never panics) when the library is missing or too old, or a file is missing.
    pub fn load(cfg: &OnnxConfig) -> Result<Self, EmbedError> {
        let started = std::time::Instant::now();
        let model_path = cfg.model_path();
        let tokenizer_path = cfg.tokenizer_path();
        for p in [&model_path, &tokenizer_path] {
            if !p.is_file() {
                return Err(EmbedError::ModelMissing { path: p.clone() });
            }
        }
        if !cfg.dylib_path.is_file() {
            return Err(EmbedError::RuntimeUnavailable {
                path: cfg.dylib_path.display().to_string(),
                reason: "file not found".into(),
            });
        }
        let unavailable = |reason: String| EmbedError::RuntimeUnavailable {
            path: cfg.dylib_path.display().to_string(),
            reason,
        };
        let env = runtime_environment(&cfg.dylib_path).map_err(unavailable)?;
        let rt = |e: ort::Error| EmbedError::Runtime(e.to_string());
        let rtb = |e: ort::Error<ort::session::builder::SessionBuilder>| {
            EmbedError::Runtime(e.to_string())
        };
        let session = Session::builder(&env)
            .map_err(rt)?
            .with_optimization_level(cfg.graph_opt.level())
            .map_err(rtb)?
            .with_intra_threads(cfg.intra_threads.max(1))
            .map_err(rtb)?
            .with_intra_op_spinning(false)
            .map_err(rtb)?
            .with_inter_threads(1)
            .map_err(rtb)?
            .commit_from_file(&model_path)
            .map_err(rt)?;
        let inputs: Vec<String> = session
            .inputs()
            .iter()
            .map(|i| i.name().to_string())
            .collect();
        let needs_token_type_ids = inputs.iter().any(|n| n == "token_type_ids");

        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: cfg.max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                ..TruncationParams::default()
            }))
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        // No padding in the tokenizer: each batch is padded to its own longest when it is
        // built (`embed_planned_batch`), after the texts were sorted by token count.
        let pad_id = tokenizer.get_padding().map_or(0, |p| p.pad_id);
        tokenizer.with_padding(None);

        let info = RuntimeInfo {
            dylib_path: cfg.dylib_path.clone(),
            build_info: ort::info().to_string(),
            model_path,
            inputs,
            load_seconds: started.elapsed().as_secs_f64(),
        };
        Ok(Self {
            id: cfg.embedder_id(),
            session: Mutex::new(session),
            tokenizer,
            needs_token_type_ids,
            batch_size: cfg.batch_size.max(1),
            token_budget: cfg.token_budget.max(1),
            pad_id,
            stats: StatsCounter::default(),
            info,
        })
    }

    /// What was loaded.
    pub fn info(&self) -> &RuntimeInfo {
        &self.info
    }

    /// Number of tokens the model sees for `text` (after truncation).
    pub fn token_count(&self, text: &str) -> Result<usize, EmbedError> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        Ok(enc.get_attention_mask().iter().filter(|m| **m != 0).count())
    }

    /// What this embedder has computed since it was loaded (texts, tokens, padded cells).
    pub fn stats(&self) -> EmbedStats {
        self.stats.snapshot()
    }

    /// Run one batch of tokenized texts, padded to its longest.
    fn embed_planned_batch(&self, encodings: &[&Encoding]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let batch = encodings.len();
        let lens: Vec<usize> = encodings.iter().map(|e| e.get_ids().len()).collect();
        let seq = lens.iter().copied().max().unwrap_or(0);
        let mut ids = Array2::<i64>::from_elem((batch, seq), i64::from(self.pad_id));
        let mut mask = Array2::<i64>::zeros((batch, seq));
        let mut types = Array2::<i64>::zeros((batch, seq));
        for (b, enc) in encodings.iter().enumerate() {
            for (t, ((&id, &m), &ty)) in enc
                .get_ids()
                .iter()
                .zip(enc.get_attention_mask())
                .zip(enc.get_type_ids())
                .enumerate()
            {
                ids[[b, t]] = i64::from(id);
                mask[[b, t]] = i64::from(m);
                types[[b, t]] = i64::from(ty);
            }
        }
        self.stats.add_batch(&lens);
        let rt = |e: ort::Error| EmbedError::Runtime(e.to_string());
        let mut session = self
            .session
            .lock()
            .map_err(|_| EmbedError::Runtime("session mutex poisoned".into()))?;
        let ids_t = TensorRef::from_array_view(&ids).map_err(rt)?;
        let mask_t = TensorRef::from_array_view(&mask).map_err(rt)?;
        let outputs = if self.needs_token_type_ids {
            let types_t = TensorRef::from_array_view(&types).map_err(rt)?;
            session.run(ort::inputs![
                "input_ids" => ids_t,
                "attention_mask" => mask_t,
                "token_type_ids" => types_t,
            ])
        } else {
            session.run(ort::inputs![
                "input_ids" => ids_t,
                "attention_mask" => mask_t,
            ])
        }
        .map_err(rt)?;
        let (shape, data) = outputs[0].try_extract_tensor::<f32>().map_err(rt)?;
        let dims: Vec<usize> = shape.iter().map(|d| (*d).max(0) as usize).collect();
        if dims.len() != 3 || dims[0] != batch || dims[1] != seq || dims[2] != MINILM_DIMS {
            return Err(EmbedError::BadOutput {
                got: dims,
                expected_dim: MINILM_DIMS,
            });
        }
        Ok(mean_pool(data, &mask, MINILM_DIMS))
    }
}

/// Mean of the token vectors where the mask is set, then L2-normalized; one row per text.
fn mean_pool(hidden: &[f32], mask: &Array2<i64>, dims: usize) -> Vec<Vec<f32>> {
    let (batch, seq) = mask.dim();
    (0..batch)
        .map(|b| {
            let mut acc = vec![0.0f32; dims];
            let mut n = 0.0f32;
            for t in 0..seq {
                if mask[[b, t]] != 0 {
                    let off = (b * seq + t) * dims;
                    for (a, h) in acc.iter_mut().zip(&hidden[off..off + dims]) {
                        *a += h;
                    }
                    n += 1.0;
                }
            }
            if n > 0.0 {
                for a in acc.iter_mut() {
                    *a /= n;
                }
            }
            l2_normalize(&mut acc);
            acc
        })
        .collect()
}

impl Embedder for OnnxEmbedder {
    fn id(&self) -> &EmbedderId {
        &self.id
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        // Tokenize everything first, then batch by token count (see `super::batch`).
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        let lens: Vec<usize> = encodings.iter().map(|e| e.get_ids().len()).collect();
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for group in plan_batches(&lens, self.batch_size, self.token_budget) {
            let batch: Vec<&Encoding> = group.iter().map(|&i| &encodings[i]).collect();
            let vecs = self.embed_planned_batch(&batch)?;
            for (&i, v) in group.iter().zip(vecs) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch_model(root: &Path, sub: &str) -> PathBuf {
        let dir = root.join(sub);
        std::fs::create_dir_all(&dir).expect("model dir");
        std::fs::write(dir.join("model.onnx"), b"m").expect("model");
        dir
    }

    #[test]
    fn a_root_with_only_the_int8_model_uses_it_and_fp32_wins_where_both_are() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let int8 = touch_model(tmp.path(), INT8_MODEL_SUBDIR);
        let cfg = OnnxConfig::locate(None, None, 1, &[tmp.path()]);
        assert_eq!(cfg.model_dir, int8);
        assert_eq!(cfg.variant, "fp32", "int8 embeds in the fp32 space");
        // The query config of the int8 model is that model itself.
        assert_eq!(cfg.query_config().model_dir, int8);

        let fp32 = touch_model(tmp.path(), MODEL_SUBDIR);
        let cfg = OnnxConfig::locate(None, None, 1, &[tmp.path()]);
        assert_eq!(cfg.model_dir, fp32);
    }

    #[test]
    fn the_runtime_is_found_in_a_data_dir_runtime_folder() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let rt = tmp.path().join("runtime");
        std::fs::create_dir_all(&rt).expect("runtime dir");
        std::fs::write(rt.join(ORT_LIB_FILE), b"so").expect("lib");
        let cfg = OnnxConfig::locate(None, None, 1, &[tmp.path()]);
        assert_eq!(cfg.dylib_path, rt.join(ORT_LIB_FILE));
    }
}
