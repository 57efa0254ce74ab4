//! BM25 postings: per (project, term) lists of (chunk, term frequency, doc length), and the
//! per-project document statistics. Written by `put_chunk` (`super::chunks`), read here.
//!
//! Tables: `postings`, `lex_stats`.

use super::schema::*;
use super::{StoreError, StoreReader};

/// BM25 postings of some projects, read from the store: the [`Postings`] source that ships
/// (search, restore and recall all score through [`crate::index::bm25_search`] over it).
///
/// [`Postings`]: crate::index::Postings
#[derive(Debug)]
pub(crate) struct StoreLexical<'a> {
    reader: &'a StoreReader,
    project_ids: Vec<u32>,
    docs: u64,
    total: u64,
}

impl StoreLexical<'_> {
    /// Number of documents.
    pub fn docs(&self) -> u64 {
        self.docs
    }

    /// Document frequency of a term over the selected projects (no postings are read).
    pub fn df(&self, term: &str) -> Result<u64, StoreError> {
        let t = self.reader.tx.open_multimap_table(POSTINGS)?;
        let mut n = 0;
        for &p in &self.project_ids {
            n += t.get((p, term))?.len();
        }
        Ok(n)
    }
}

impl crate::index::Postings for StoreLexical<'_> {
    type Error = StoreError;

    fn doc_count(&self) -> Result<u64, StoreError> {
        Ok(self.docs)
    }

    fn total_len(&self) -> Result<u64, StoreError> {
        Ok(self.total)
    }

    fn postings(&self, term: &str) -> Result<Vec<crate::index::Posting>, StoreError> {
        let t = self.reader.tx.open_multimap_table(POSTINGS)?;
        let mut out = Vec::new();
        for &p in &self.project_ids {
            for v in t.get((p, term))? {
                let (doc, tf, doc_len) = v?.value();
                out.push(crate::index::Posting { doc, tf, doc_len });
            }
        }
        Ok(out)
    }
}

impl StoreReader {
    /// A BM25 postings view over the given projects.
    pub fn lexical(&self, project_ids: &[u32]) -> Result<StoreLexical<'_>, StoreError> {
        let stats = self.tx.open_table(LEX_STATS)?;
        let mut docs = 0;
        let mut total = 0;
        for &p in project_ids {
            if let Some(v) = stats.get(p)? {
                let (d, t) = v.value();
                docs += d;
                total += t;
            }
        }
        Ok(StoreLexical {
            reader: self,
            project_ids: project_ids.to_vec(),
            docs,
            total,
        })
    }
}
