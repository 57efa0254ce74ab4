//! The one codec of stored values: records (bincode, standard config) and f32 vectors
//! (little-endian), with typed errors.
//!
//! Why one module: the store and the swap each had their own copies, and a short vector was
//! silently cut to whole floats instead of being reported. Every record goes through
//! [`encode`] and [`decode`] so that versioned records can later be added in one place.

use crate::error::CodecError;

/// Encode a record.
pub(crate) fn encode<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, CodecError> {
    bincode::serde::encode_to_vec(v, bincode::config::standard())
        .map_err(|e| CodecError::Encode(e.to_string()))
}

/// Decode a record; `what` names it in the error (trailing bytes are ignored, as before).
pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    b: &[u8],
    what: &str,
) -> Result<T, CodecError> {
    decode_prefix(b, what).map(|(v, _)| v)
}

/// Decode a record from the front of `b`; also returns the bytes it used (layout detection
/// of older records, see `store::schema::decode_session`).
pub(crate) fn decode_prefix<T: serde::de::DeserializeOwned>(
    b: &[u8],
    what: &str,
) -> Result<(T, usize), CodecError> {
    bincode::serde::decode_from_slice(b, bincode::config::standard())
        .map_err(|e| CodecError::Decode(format!("{what}: {e}")))
}

/// An f32 vector as stored: 4 little-endian bytes per value.
pub(crate) fn f32s_to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A stored f32 vector; a length that is not a multiple of 4 is an error (never cut).
pub(crate) fn bytes_to_f32s(b: &[u8]) -> Result<Vec<f32>, CodecError> {
    if !b.len().is_multiple_of(4) {
        return Err(CodecError::Length {
            what: "f32 vector",
            expected: "a multiple of 4".into(),
            got: b.len(),
        });
    }
    Ok(b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// A stored little-endian integer of exactly `N` bytes.
pub(crate) fn le_bytes<const N: usize>(
    b: &[u8],
    what: &'static str,
) -> Result<[u8; N], CodecError> {
    b.try_into().map_err(|_| CodecError::Length {
        what,
        expected: N.to_string(),
        got: b.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_vector_is_an_error_not_a_shorter_vector() {
        let err = bytes_to_f32s(&[0, 0, 128, 63, 1]).expect_err("5 bytes");
        assert!(matches!(err, CodecError::Length { got: 5, .. }), "{err}");
    }

    #[test]
    fn wrong_width_integer_is_an_error() {
        assert!(le_bytes::<8>(&[1, 2, 3], "next chunk id").is_err());
        assert_eq!(
            le_bytes::<4>(&[1, 0, 0, 0], "schema").ok(),
            Some([1, 0, 0, 0])
        );
    }

    proptest! {
        #[test]
        fn vectors_round_trip(v in proptest::collection::vec(-1e6f32..1e6, 0..64)) {
            prop_assert_eq!(bytes_to_f32s(&f32s_to_bytes(&v)).ok(), Some(v));
        }

        #[test]
        fn records_round_trip(a in any::<u64>(), s in "\\PC{0,40}") {
            let b = encode(&(a, s.clone())).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let back: (u64, String) = decode(&b, "pair").map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(back, (a, s));
        }
    }
}
