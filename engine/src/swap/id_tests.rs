//! Regression tests: swap ids typed by users or read from a damaged store are errors, never a
//! panic from slicing them.

use super::tests::engine;
use super::*;

const T0: i64 = 1_800_000_000;

/// `memctl swap show <id>` with a bad id: a clear "not a swap id" error.
fn assert_not_a_swap_id(id: &str) {
    let (_d, e) = engine();
    for res in [
        e.swap_show(id, T0).map(|_| ()),
        e.core().swap_resolve(id).map(|_| ()),
    ] {
        let err = res.expect_err(id);
        assert!(
            matches!(&err, EngineError::Invalid(m) if m.starts_with("not a swap id")),
            "{id:?}: {err}"
        );
    }
}

#[test]
fn swap_show_too_short_id_is_an_error_not_a_panic() {
    for id in ["", "a", "abc", "  ab  "] {
        assert_not_a_swap_id(id);
    }
}

#[test]
fn swap_show_non_hex_id_is_an_error_not_a_panic() {
    for id in [
        "zzzzzzzzzzzz",
        "../../etc/passwd",
        "abcd-1234",
        &"f".repeat(65),
    ] {
        assert_not_a_swap_id(id);
    }
}

#[test]
fn swap_show_multibyte_unicode_id_is_an_error_not_a_panic() {
    // Byte 12 falls inside a character in the last two.
    for id in ["éééé", "日本語の", "abcdefabcde€", "0123456789aé0000"] {
        assert_not_a_swap_id(id);
    }
}

/// `&id[..SHORT_ID_LEN]` on stored ids listed as ambiguous panicked when a damaged store held
/// ids shorter than that (or not ASCII).
#[test]
fn ambiguous_short_stored_swap_ids_are_an_error_not_a_panic() {
    let (_d, e) = engine();
    e.store()
        .write(|w| {
            let mut t = w.raw_tx().open_table(SWAP_BLOBS)?;
            for id in ["abcd1", "abcd2é"] {
                t.insert(id, [0u8].as_slice())?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("write: {e}"));
    let err = e.core().swap_resolve("abcd").expect_err("two ids match");
    let EngineError::Invalid(msg) = &err else {
        panic!("{err}");
    };
    assert!(msg.contains("ambiguous") && msg.contains("abcd2é"), "{msg}");
}

#[test]
fn short_id_never_splits_a_character() {
    assert_eq!(short_id("abc"), "abc");
    assert_eq!(short_id("0123456789abcdef"), "0123456789ab");
    assert_eq!(short_id("0123456789aé"), "0123456789aé");
}
