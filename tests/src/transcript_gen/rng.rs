//! A small seeded PRNG (SplitMix64) and the clock helpers of the generator.
//!
//! Our own rather than the `rand` crate: the bytes of a generated transcript are part of what
//! the tests pin (same seed, same bytes), so the stream must never change under a dependency
//! upgrade.

use std::fmt::Write as _;

const B62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// SplitMix64: one u64 of state, full period, good enough statistics for synthetic text.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A stream for `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// A stream named by a string (`"extras:7"`, `"orbit-sync:src/lib.rs"`): FNV-1a of the
    /// name, so that independent streams do not shift each other.
    pub fn named(name: &str) -> Self {
        Self::new(fnv1a(name.as_bytes()))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n == 0`), by multiply-shift: no modulo bias worth noting.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..hi` (`lo` when the range is empty), like Python's `randrange`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo))
    }

    /// Uniform index into a collection of `len` items.
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One item. Panics on an empty slice: every list it is given is a non-empty constant.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.index(items.len())]
    }

    /// `k` distinct items in random order (all of them when `k >= len`).
    pub fn sample<T: Clone>(&mut self, items: &[T], k: usize) -> Vec<T> {
        let mut idx: Vec<usize> = (0..items.len()).collect();
        let k = k.min(idx.len());
        for i in 0..k {
            let j = i + self.index(idx.len() - i);
            idx.swap(i, j);
        }
        idx[..k].iter().map(|&i| items[i].clone()).collect()
    }

    /// A random version-4 UUID, as Claude Code writes them.
    pub fn uuid(&mut self) -> String {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.next_u64().to_be_bytes());
        b[8..].copy_from_slice(&self.next_u64().to_be_bytes());
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let mut s = String::with_capacity(36);
        for (i, byte) in b.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                s.push('-');
            }
            let _ = write!(s, "{byte:02x}");
        }
        s
    }

    /// `prefix` + `n` base-62 characters (`msg_01…`, `req_011C…`, `toolu_01…` ids).
    pub fn id(&mut self, prefix: &str, n: usize) -> String {
        let mut s = String::with_capacity(prefix.len() + n);
        s.push_str(prefix);
        for _ in 0..n {
            s.push(char::from(self.pick(B62)));
        }
        s
    }
}

/// FNV-1a 64: a stable string hash for seeding named streams.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Milliseconds since the Unix epoch as Claude Code's timestamps: `2025-10-01T09:00:00.000Z`.
pub fn iso(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let milli = ms.rem_euclid(1000);
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{milli:03}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    )
}

/// The inverse of [`iso`] for `YYYY-MM-DDTHH:MM:SS[.fff…]Z`; `None` for anything else.
pub fn parse_iso(s: &str) -> Option<i64> {
    let s = s.strip_suffix('Z')?;
    let (date, time) = s.split_once('T')?;
    let mut d = date.splitn(3, '-').map(str::parse::<i64>);
    let (y, m, day) = (d.next()?.ok()?, d.next()?.ok()?, d.next()?.ok()?);
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut t = hms.splitn(3, ':').map(str::parse::<i64>);
    let (h, mi, sec) = (t.next()?.ok()?, t.next()?.ok()?, t.next()?.ok()?);
    let milli: i64 = format!("{frac:0<3}").get(..3)?.parse().ok()?;
    let days = days_from_civil(y, m, day);
    Some(((days * 86_400 + h * 3600 + mi * 60 + sec) * 1000) + milli)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_round_trips() {
        let t = days_from_civil(2025, 10, 1) * 86_400_000 + 9 * 3_600_000 + 1234;
        assert_eq!(iso(t), "2025-10-01T09:00:01.234Z");
        assert_eq!(parse_iso(&iso(t)), Some(t));
        assert_eq!(
            parse_iso("2024-02-29T23:59:59.5Z").map(iso).as_deref(),
            Some("2024-02-29T23:59:59.500Z")
        );
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn uuid_is_version_4() {
        let u = Rng::new(1).uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "{u}");
    }

    #[test]
    fn sample_is_distinct() {
        let mut r = Rng::new(3);
        let s = r.sample(&[1, 2, 3, 4, 5], 4);
        let mut d = s.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), 4);
    }
}
