/// mimalloc, not glibc malloc: ingest allocates and frees millions of small strings and
/// vectors (terms, postings, records); glibc spent a visible share of a first archive in
/// `malloc_consolidate` and `_int_free`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    memctl_hooks::hook::main()
}
