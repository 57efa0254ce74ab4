//! `memctl status`: counts, sizes, embedder and index state (cheap: never loads the model).

use anyhow::Result;
use memctl_engine::Engine;
use std::io::Write;

pub(super) fn status(engine: Engine, out: &mut dyn Write) -> Result<()> {
    let st = engine.status()?;
    writeln!(out, "store:      {}", engine.store_path().display())?;
    writeln!(out, "file size:  {} bytes", st.file_bytes)?;
    writeln!(out, "projects:   {}", st.projects)?;
    writeln!(out, "sessions:   {}", st.sessions)?;
    writeln!(out, "chunks:     {}", st.chunks)?;
    writeln!(
        out,
        "pending:    {} chunks without a model vector",
        st.pending
    )?;
    for (emb, n) in &st.vectors {
        writeln!(out, "vectors:    {n} × {emb} (int8 blocks + f32)")?;
    }
    // `status` must stay cheap (statuslines and scripts call it): report the configured
    // embedder without loading the model; `memctl doctor` loads it and reports for real.
    let o = engine.options();
    let embedder = if o.model_disabled {
        "hash-ngram@v1/384 (model disabled)".to_string()
    } else if o.onnx.dylib_path.is_file() && o.onnx.model_path().is_file() {
        format!(
            "all-MiniLM-L6-v2@{}/384 (ONNX, loaded on demand)",
            o.onnx.variant
        )
    } else {
        "hash-ngram@v1/384 (fallback: model or runtime missing; see memctl doctor)".to_string()
    };
    writeln!(out, "embedder:   {embedder}")?;
    writeln!(
        out,
        "index:      exact int8 scan + f32 re-score (per query); BM25 postings in redb"
    )?;
    Ok(())
}
