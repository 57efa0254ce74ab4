//! Logging: to stderr for the CLI, to `<data dir>/logs/memctl.log` for hooks.
//!
//! Hooks must never write diagnostics to stdout (Claude Code reads it as hook output) and must
//! keep working when the log file cannot be opened: logging failures are ignored on purpose.

use std::path::Path;
use tracing_subscriber::EnvFilter;

/// `filter` (`MEMCTL_LOG`, from [`memctl_engine::Settings::log`]) when it is a valid
/// directive, else `default`.
fn env_filter(filter: Option<&str>, default: &str) -> EnvFilter {
    filter
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| EnvFilter::new(default))
}

/// CLI logging to stderr; `MEMCTL_LOG` sets the filter (default `warn`).
pub fn init_cli(filter: Option<&str>) {
    let filter = env_filter(filter, "warn");
    // A second init (tests) is harmless: try_init reports it and we ignore that report.
    // Colour only for a person at a terminal: a warning piped to a file stays plain text.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}

/// Hook logging to an append-only file in the data dir. Returns false when no log file could
/// be opened (the hook still runs).
pub fn init_file(data_dir: &Path, filter: Option<&str>) -> bool {
    let dir = data_dir.join("logs");
    // Logs can quote transcript paths and errors: private like the rest of the data dir.
    if memctl_engine::ensure_private_dir(&dir).is_err() {
        return false;
    }
    let path = dir.join("memctl.log");
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let file = match opts.open(&path) {
        Ok(f) => f,
        Err(_) => return false,
    };
    let filter = env_filter(filter, "info");
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
    true
}

/// Fallback for hooks when the log file cannot be opened: warnings and errors to stderr.
pub fn init_stderr_warn() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::new("warn"))
        .with_ansi(false)
        .with_writer(std::io::stderr)
        .try_init();
}
