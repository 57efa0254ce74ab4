//! Benchmarks live in `benches/`; this library holds what only they (and their tests) use: the
//! in-memory vector indexes ([`index`]).

pub mod index;
