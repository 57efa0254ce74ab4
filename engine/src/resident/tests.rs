use super::client::parse_response;
use super::*;

fn line(r: &Response) -> Vec<u8> {
    serde_json::to_vec(r).unwrap_or_default()
}

fn ok_response(dims: usize, n: usize) -> Response {
    Response {
        v: PROTOCOL_VERSION,
        model: Some(EmbedderId::new("all-MiniLM-L6-v2", "fp32-1", dims)),
        vector: vec![0.5; n],
        error: None,
        ann: None,
    }
}

#[test]
fn a_good_response_gives_the_vector_and_its_space() {
    let got = parse_response(&line(&ok_response(4, 4))).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got.embedder.dims, 4);
    assert_eq!(got.vector, vec![0.5; 4]);
}

#[test]
fn bad_responses_are_errors_never_vectors() {
    let mut other_version = ok_response(4, 4);
    other_version.v = PROTOCOL_VERSION + 1;
    let short = ok_response(4, 3);
    let mut nan = ok_response(2, 2);
    nan.vector[1] = f32::NAN;
    let mut failed = ok_response(4, 0);
    failed.model = None;
    failed.error = Some("model gone".into());
    let mut no_model = ok_response(4, 4);
    no_model.model = None;
    for (what, bytes) in [
        ("other version", line(&other_version)),
        ("short vector", line(&short)),
        ("nan", line(&nan)),
        ("server error", line(&failed)),
        ("no model", line(&no_model)),
        ("garbage", b"not json\n".to_vec()),
        ("empty", Vec::new()),
    ] {
        assert!(parse_response(&bytes).is_err(), "{what} was accepted");
    }
    assert!(matches!(
        parse_response(&line(&failed)),
        Err(ResidentError::Server(m)) if m == "model gone"
    ));
}

#[test]
fn no_server_means_not_running_at_once() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let r = embed_query(
        dir.path(),
        "where is the config?",
        Duration::from_millis(50),
    );
    assert!(matches!(r, Err(ResidentError::NotRunning { .. })), "{r:?}");
    // A socket file left by a server that died: connection refused, also "not running".
    let sock = socket_path(dir.path());
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap_or_else(|e| panic!("{e}")));
    let r = embed_query(
        dir.path(),
        "where is the config?",
        Duration::from_millis(50),
    );
    assert!(matches!(r, Err(ResidentError::NotRunning { .. })), "{r:?}");
}

#[test]
fn a_silent_server_costs_the_timeout_not_more() {
    // Something listens but never answers (a stuck or foreign process): the client gives up.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let _listener = std::os::unix::net::UnixListener::bind(socket_path(dir.path()))
        .unwrap_or_else(|e| panic!("{e}"));
    let r = embed_query(dir.path(), "which host?", Duration::from_millis(30));
    assert!(matches!(r, Err(ResidentError::Io { .. })), "{r:?}");
}

#[test]
fn a_socket_path_too_long_is_refused_not_truncated() {
    let deep = std::path::PathBuf::from("/").join("d".repeat(120));
    let r = embed_query(&deep, "x", Duration::from_millis(10));
    assert!(matches!(r, Err(ResidentError::PathTooLong { .. })), "{r:?}");
}
