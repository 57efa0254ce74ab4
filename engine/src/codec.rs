//! The one codec of stored values: records (bincode, standard config) and vectors (f32 for
//! tool outputs, f16 for re-scoring; little-endian), with typed errors.
//!
//! Why one module: the store and the swap each had their own copies, and a short vector was
//! silently cut to whole floats instead of being reported.
//!
//! Versioned records (schema 2 on): every stored record value is one format version byte
//! followed by the body ([`Record`]). Why an explicit version byte over a self-describing
//! encoding (CBOR, MessagePack maps): the body stays compact positional bincode, one byte
//! larger per record (decode +6 %), while CBOR made the sample's chunk records 8.5 % larger
//! and 2.2x slower to decode, JSON 15 % and 2.8x (`cargo bench -p memctl-benches --bench
//! records`, docs/perf/store-bytes.md); and a version says
//! exactly which layout a row has, where field-name matching would silently read a renamed
//! field as missing. Adding a field: bump the type's `VERSION`, freeze the old layout as a
//! private struct, and decode it in `decode_body` (the store keeps old rows as they are and
//! writes new ones in the new layout; no migration).

pub use crate::error::CodecError;

/// A stored record with a format version (see the module doc).
pub trait Record: serde::Serialize + serde::de::DeserializeOwned {
    /// Names the record in errors.
    const WHAT: &'static str;
    /// The format version this memctl writes.
    const VERSION: u8;

    /// Encode the body of the current version (default: bincode).
    fn encode_body(&self) -> Result<Vec<u8>, CodecError> {
        encode(self)
    }

    /// Decode a body of format `version` (1..=`VERSION`). The default knows only the
    /// current layout (bincode, every byte used); a type whose layout changed decodes its
    /// older versions here.
    fn decode_body(version: u8, body: &[u8]) -> Result<Self, CodecError> {
        if version != Self::VERSION {
            return Err(CodecError::Decode(format!(
                "{}: unknown format version {version}",
                Self::WHAT
            )));
        }
        decode_exact(body, Self::WHAT)
    }
}

/// Encode a record: its format version byte, then the body.
pub fn encode_record<T: Record>(v: &T) -> Result<Vec<u8>, CodecError> {
    let body = v.encode_body()?;
    let mut out = Vec::with_capacity(body.len() + 1);
    out.push(T::VERSION);
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decode a record of any format version this memctl knows; a newer one is
/// [`CodecError::NewerRecord`], never a misread.
pub fn decode_record<T: Record>(b: &[u8]) -> Result<T, CodecError> {
    match b.split_first() {
        None => Err(CodecError::Decode(format!("{}: empty value", T::WHAT))),
        Some((&0, _)) => Err(CodecError::Decode(format!(
            "{}: format version 0 does not exist",
            T::WHAT
        ))),
        Some((&v, _)) if v > T::VERSION => Err(CodecError::NewerRecord {
            what: T::WHAT,
            version: v,
            supported: T::VERSION,
        }),
        Some((&v, body)) => T::decode_body(v, body),
    }
}

/// Decode a whole bincode body: trailing bytes are an error (a record of another layout).
pub(crate) fn decode_exact<T: serde::de::DeserializeOwned>(
    b: &[u8],
    what: &str,
) -> Result<T, CodecError> {
    let (v, used) = decode_prefix(b, what)?;
    if used != b.len() {
        return Err(CodecError::Decode(format!(
            "{what}: {} trailing bytes",
            b.len() - used
        )));
    }
    Ok(v)
}

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

/// A re-scoring vector as stored (schema 4): 2 little-endian bytes per value (IEEE f16).
///
/// Why f16: the vectors are unit length (every value within ±1), where f16 keeps ~3 decimal
/// digits; a cosine computed from them moves by ~1e-4, far below the gaps between ranked
/// chunks, and each vector takes half the bytes of f32 (768 instead of 1,536 at 384 dims).
pub(crate) fn f32s_to_f16_bytes(v: &[f32]) -> Vec<u8> {
    v.iter()
        .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
        .collect()
}

/// A stored f16 vector as f32; a length that is not a multiple of 2 is an error (never cut).
pub(crate) fn f16_bytes_to_f32s(b: &[u8]) -> Result<Vec<f32>, CodecError> {
    if !b.len().is_multiple_of(2) {
        return Err(CodecError::Length {
            what: "f16 vector",
            expected: "a multiple of 2".into(),
            got: b.len(),
        });
    }
    Ok(b.chunks_exact(2)
        .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
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
