//! Where a store's bytes are: redb's own statistics per table, as one JSON object.
//!
//! usage: `cargo run --release -p memctl-engine --example store_stats -- <memctl.redb>`
//!
//! Why an example and not a `memctl` command: it is a measuring tool for the storage work
//! (`scripts/bench_store_bytes.py` prints it next to bytes per chunk), not something
//! a user needs. It opens the file read-only in the store's multi-process mode, so it can run
//! beside hooks.

use redb::{
    Builder, ConcurrencyMode, MultimapTableHandle, ReadableDatabase, ReadableTableMetadata,
    TableHandle,
};
use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args().nth(1) else {
        return Err("usage: store_stats <memctl.redb>".into());
    };
    let mut b = Builder::new();
    b.set_concurrency_mode(ConcurrencyMode::MultiWriter);
    let db = b.open_read_only(&path)?;
    let tx = db.begin_read()?;
    let mut tables = BTreeMap::new();
    for h in tx.list_tables()? {
        let name = h.name().to_string();
        let t = tx.open_untyped_table(h)?;
        let s = t.stats()?;
        tables.insert(
            name,
            serde_json::json!({
                "rows": t.len()?,
                "stored_bytes": s.stored_bytes(),
                "metadata_bytes": s.metadata_bytes(),
                "fragmented_bytes": s.fragmented_bytes(),
                "leaf_pages": s.leaf_pages(),
                "branch_pages": s.branch_pages(),
            }),
        );
    }
    for h in tx.list_multimap_tables()? {
        let name = h.name().to_string();
        let t = tx.open_untyped_multimap_table(h)?;
        let s = t.stats()?;
        tables.insert(
            name,
            serde_json::json!({
                "rows": t.len()?,
                "stored_bytes": s.stored_bytes(),
                "metadata_bytes": s.metadata_bytes(),
                "fragmented_bytes": s.fragmented_bytes(),
                "leaf_pages": s.leaf_pages(),
                "branch_pages": s.branch_pages(),
            }),
        );
    }
    let file_bytes = std::fs::metadata(&path)?.len();
    let pages: u64 = tables
        .values()
        .map(|v| v["leaf_pages"].as_u64().unwrap_or(0) + v["branch_pages"].as_u64().unwrap_or(0))
        .sum();
    println!(
        "{}",
        serde_json::json!({
            "file_bytes": file_bytes,
            "table_pages": pages,
            "table_page_bytes": pages * 4096,
            "tables": tables,
        })
    );
    Ok(())
}
