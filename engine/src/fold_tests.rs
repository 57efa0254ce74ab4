use super::*;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// Fixed seed of the property tests (printed by `property_seed_is_printed`): a failure
/// reproduces as is; change it to explore other cases.
const SEED: u64 = 0xf01d_2026;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 512,
        rng_seed: RngSeed::Fixed(SEED),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The representative of each candidate of `sigs` (in that order) under [`Groups`].
fn group(sigs: impl IntoIterator<Item = Sig>) -> Vec<usize> {
    let mut g = Groups::default();
    for s in sigs {
        g.push(s);
    }
    (0..g.sigs.len()).map(|i| g.representative(i)).collect()
}

#[test]
fn property_seed_is_printed() {
    println!("fold property tests: proptest seed {SEED:#x}, 512 cases");
    assert_eq!(config().rng_seed, RngSeed::Fixed(SEED));
}

const PYTEST_HEAD: &str = "============================= test session starts ==============================\n\
    platform linux -- Python 3.11.6, pytest-7.4.3, pluggy-1.3.0\nrootdir: /home/dev/src/app\n\
    configfile: pyproject.toml\nplugins: anyio-4.0.0, cov-4.1.0, xdist-3.3.1, timeout-2.2.0\n";

/// A run of the invoice suite (scripts/dups_near.py), as the store holds it.
fn invoice_run(currency: &str, passed: u32, skipped: u32, secs: &str, at: &str) -> String {
    format!(
        "User: Run the invoice tests.\n[tool: Bash] {{\"command\":\"pytest tests/invoice -q\"}}\n\
         [result: Bash] {PYTEST_HEAD}collected 120 items\n\n\
         tests/invoice/test_totals.py ..........s.........\n\
         tests/invoice/test_discounts.py ................\n\
         tests/invoice/test_currency.py {currency}\ntests/invoice/test_pdf.py ...........\n\
         tests/invoice/test_rounding.py .....................\n\
         tests/invoice/test_api.py ...............s....\n\n\
         ======================= {passed} passed, {skipped} skipped in {secs}s ========================\n\
         finished at {at}\nAssistant: All invoice tests pass: {passed} passed, {skipped} skipped."
    )
}

/// A failing run of the orders suite: the same boilerplate, one failure.
fn orders_failure(test: &str, trace: &str) -> String {
    format!(
        "User: Run the orders tests.\n[tool: Bash] {{\"command\":\"pytest tests/orders -q\"}}\n\
         [result: Bash] {PYTEST_HEAD}collected 65 items\n\n\
         tests/orders/test_cart.py ................\n\
         tests/orders/test_checkout.py ..............F...\n\
         tests/orders/test_refunds.py ............\n\
         tests/orders/test_shipping.py ...................\n\n\
         =================================== FAILURES ===================================\n\
         _________________________________ {test} _________________________________\n{trace}\n\
         =========================== short test summary info ============================\n\
         FAILED tests/orders/{test}\n==================== 1 failed, 64 passed in 13.44s \
         ====================\nAssistant: One orders test fails: {test}."
    )
}

const EXPORT_A: &str = "User: How does the exporter decide when to flush a batch?\nAssistant: The \
    exporter flushes a batch when either limit is reached: `BatchConfig::max_items` (512 by \
    default) or `BatchConfig::max_bytes` (1 MiB). A timer in `src/export/batch.rs` also flushes \
    a partial batch after `linger`, so a quiet stream still goes out; on shutdown \
    `Exporter::close` drains whatever is left before it returns. (checked 2025-10-25T13:09:38Z)";
const EXPORT_B: &str = "User: How does the exporter decide when to flush a batch?\nAssistant: The \
    exporter flushes a batch as soon as either limit is hit: `BatchConfig::max_items` (512 by \
    default) or `BatchConfig::max_bytes` (1 MiB). A timer in `src/export/batch.rs` also sends \
    a partial batch after `linger`, so a quiet stream still goes out; at shutdown \
    `Exporter::close` drains whatever remains before it returns. (checked 2025-10-01T19:04:35Z)";
const HEADER: &str = "User: What does `parse_header` return on empty input?\nAssistant: \
    `parse_header` returns `Err(HeaderError::Empty)` on empty input: it reads the magic bytes \
    first and `parse_header` never treats a missing header as valid.";
const FOOTER: &str = "User: What does `parse_footer` return on empty input?\nAssistant: \
    `parse_footer` returns `Ok(None)` on empty input: a stream may end without a footer and \
    the reader then falls back to scanning the blocks.";

/// A signature with a model vector whose cosine with [`unit`]'s is `cos`.
fn with_cos(text: &str, cos: f32) -> Sig {
    let v = vec![cos, (1.0 - cos * cos).max(0.0).sqrt(), 0.0];
    Sig::new(1, text, Some(("m@fp32/3".into(), v)))
}

fn unit(text: &str) -> Sig {
    with_cos(text, 1.0)
}

/// The chosen thresholds on labelled pairs of scripts/dups_near.py: near-copies the key misses
/// fold on text and vector; hard negatives do not, even when their vectors are identical (the
/// model reads the first 256 tokens: the same boilerplate makes the same vector).
#[test]
fn the_thresholds_fold_near_copies_and_keep_hard_negatives_apart() {
    let one_more_passed = (
        invoice_run("............s...", 117, 3, "25.25", "2025-10-21T21:35:12Z"),
        invoice_run("................", 118, 2, "10.75", "2025-10-21T23:16:44Z"),
    );
    let near_pairs = [
        (one_more_passed.0.as_str(), one_more_passed.1.as_str()),
        (EXPORT_A, EXPORT_B),
    ];
    for (a, b) in near_pairs {
        assert_ne!(fold_key(a), fold_key(b), "the key misses them");
        let j = text_similarity(a, b);
        assert!(j >= TEXT_MIN, "Jaccard {j} < {TEXT_MIN}: {b}");
        assert!(near(&unit(a), &with_cos(b, 0.93)), "{b}");
        assert!(
            !near(&unit(a), &with_cos(b, 0.85)),
            "the vector vetoes: {b}"
        );
        assert!(!near(&Sig::new(1, a, None), &Sig::new(1, b, None)) || j >= TEXT_ALONE_MIN);
        assert!(!near(&Sig::new(2, a, None), &unit(b)), "another project");
    }
    let refund = orders_failure(
        "test_refund_rounding",
        "    def test_refund_rounding():\n        order = make_order(total=Decimal(\"10.005\"))\n\
         >       assert refund(order).amount == Decimal(\"10.00\")\n\
         E       AssertionError: assert Decimal('10.01') == Decimal('10.00')\n\
         tests/orders/test_checkout.py:88: AssertionError",
    );
    let tax = orders_failure(
        "test_tax_region_lookup",
        "    def test_tax_region_lookup():\n        rates = load_rates(\"fixtures/rates.json\")\n\
         >       assert rates[\"EU\"][\"DE\"] == 19\nE       KeyError: 'EU'\n\
         src/orders/tax.py:41: in load_rates\ntests/orders/test_checkout.py:131: KeyError",
    );
    for (a, b) in [(refund.as_str(), tax.as_str()), (HEADER, FOOTER)] {
        let j = text_similarity(a, b);
        assert!(j < TEXT_MIN, "Jaccard {j} >= {TEXT_MIN}: {b}");
        assert!(
            !near(&unit(a), &unit(b)),
            "identical vectors do not fold them: {b}"
        );
    }
}

#[test]
fn a_test_run_repeated_with_other_timings_folds() {
    let a = "User: run the tests\n[tool: Bash] cargo test -p billing\n[result: test result: ok. \
             12 passed; 0 failed; finished in 0.52s]\n  Compiling billing v0.3.1 (/tmp/tmp.Xk2a9/b)\n\
             Finished `test` profile in 41.07s at 2026-11-20T10:02:11Z pid 48213 run 3f9a2c1";
    let b = "User:  run the tests\n[tool: Bash] cargo test -p billing\n[result: test result: ok. \
             12 passed; 0 failed; finished in 1.9s]\n  Compiling billing v0.3.1 (/tmp/tmp.Qz81b/b)\n\
             Finished `test` profile in 38.6s at 2026-11-27T09:14:53Z pid 51102 run 88e0d4b";
    assert_eq!(normalize(a), normalize(b));
    assert_eq!(fold_key(a), fold_key(b));
}

#[test]
fn what_carries_meaning_does_not_fold() {
    let run = |passed: u32, failed: u32| {
        format!("test result: FAILED. {passed} passed; {failed} failed; finished in 0.5s")
    };
    assert_ne!(fold_key(&run(12, 0)), fold_key(&run(10, 2)));
    assert_ne!(
        fold_key("error at src/a.rs:41"),
        fold_key("error at src/a.rs:42")
    );
    assert_ne!(fold_key("rustc 1.79.0"), fold_key("rustc 1.80.0"));
    assert_ne!(
        fold_key("see /home/u/tmp/notes.md"),
        fold_key("see /home/u/tmp/todo.md")
    );
    assert_ne!(
        fold_key("the cache is defaced"),
        fold_key("the cache is effaced")
    );
}

#[test]
fn each_volatile_shape_is_masked() {
    let cases = [
        ("id 123e4567-e89b-12d3-a456-426614174000 ok", "id <id> ok"),
        ("at 2026-11-28T14:49:52.123+01:00 ok", "at <time> ok"),
        ("at 2026-11-28 ok", "at <time> ok"),
        ("at 14:49:52 ok", "at <time> ok"),
        (
            "wrote /tmp/pytest-of-u/pytest-12/x.txt ok",
            "wrote <tmp> ok",
        ),
        ("wrote /private/var/folders/ab/cd/T/x ok", "wrote <tmp> ok"),
        ("file tmpa1b2c3d4 ok", "file <tmp> ok"),
        ("took 120ms and 3 seconds ok", "took <dur> and <dur> ok"),
        ("commit b7d2b3c ok", "commit <n> ok"),
        ("pid 48213 port 8080 ok", "pid <n> port <n> ok"),
        ("ratio 0.93 ok", "ratio <n> ok"),
        ("A\tB   c\n\nD", "a b c d"),
    ];
    for (text, want) in cases {
        assert_eq!(normalize(text), want, "{text}");
    }
}

#[test]
fn copies_count_and_span_their_dates() {
    let mut c = Copies::of(Some("2026-11-25T10:00:00Z"));
    assert_eq!(c.label(), None);
    c.add(7, Some("2026-11-27T09:14:00Z"));
    c.add(9, None);
    c.add(3, Some("2026-11-20T10:02:00Z"));
    assert_eq!(c.count(), 4);
    assert_eq!(c.ids, vec![7, 9, 3]);
    assert_eq!(
        c.label().as_deref(),
        Some("×4, first 2026-11-20 10:02, last 2026-11-27 09:14")
    );
}

#[test]
fn the_folder_folds_per_project() {
    let sig = |p: u32, t: &str| Sig::new(p, t, None);
    let mut f = Folder::default();
    assert_eq!(f.copy_of(sig(1, "run 1.2s"), 0), None);
    assert_eq!(f.copy_of(sig(1, "run 3.4s"), 1), Some(0));
    assert_eq!(f.copy_of(sig(2, "run 3.4s"), 1), None);
    assert_eq!(f.find(&sig(2, "run 9s")), Some(1));
    assert_eq!(f.find(&sig(3, "run 9s")), None);
}

/// A line of words (no digits), so that only the words decide the key.
fn words() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec("[a-z]{1,10}", 1..20)
}

proptest! {
    #![proptest_config(config())]

    /// The same template filled with other volatile values (timings, timestamps, ids, temp
    /// paths, pids) always folds, whatever the spacing.
    #[test]
    fn volatile_values_never_change_the_key(
        w in words(),
        ms in (0u32..100_000, 0u32..100_000),
        secs in (0u32..1000, 0u32..1000),
        day in (1u32..29, 1u32..29),
        pid in (1000u32..99_999, 1000u32..99_999),
        hex in ("[0-9a-f]{6}[0-9]", "[0-9a-f]{6}[0-9]"),
        tmp in ("[A-Za-z0-9]{1,12}", "[A-Za-z0-9]{1,12}"),
        gap in ("[ \t\n]{1,3}", "[ \t\n]{1,3}"),
    ) {
        let text = |ms: u32, s: u32, d: u32, pid: u32, hex: &str, tmp: &str, gap: &str| {
            format!(
                "{}{gap}took {ms}ms ({s}.{s}s) at 2026-11-{d:02}T10:{:02}:00Z pid {pid} \
                 commit {hex} in /tmp/{tmp}/out",
                w.join(gap), s % 60
            )
        };
        let a = text(ms.0, secs.0, day.0, pid.0, &hex.0, &tmp.0, &gap.0);
        let b = text(ms.1, secs.1, day.1, pid.1, &hex.1, &tmp.1, &gap.1);
        prop_assert_eq!(fold_key(&a), fold_key(&b), "{:?} vs {:?}", a, b);
    }

    /// A different word is a different turn: replacing one word never folds.
    #[test]
    fn another_word_changes_the_key(w in words(), at in any::<prop::sample::Index>(), other in "[a-z]{1,10}") {
        let i = at.index(w.len());
        prop_assume!(w[i] != other && !other.starts_with("tmp") && !w[i].starts_with("tmp"));
        let mut changed = w.clone();
        changed[i] = other;
        prop_assert_ne!(fold_key(&w.join(" ")), fold_key(&changed.join(" ")));
    }

    /// Small counts carry meaning: a test summary with other counts never folds.
    #[test]
    fn other_counts_change_the_key(p in (0u32..1000, 0u32..1000), f in (0u32..1000, 0u32..1000)) {
        prop_assume!(p.0 != p.1 || f.0 != f.1);
        let run = |p: u32, f: u32| format!("test result: {p} passed; {f} failed; finished in 0.5s");
        prop_assert_ne!(fold_key(&run(p.0, f.0)), fold_key(&run(p.1, f.1)));
    }

    /// The key is a function of the text, and the normal form has single spaces only.
    #[test]
    fn the_key_is_deterministic(text in "\\PC{0,200}") {
        prop_assert_eq!(fold_key(&text), fold_key(&text));
        let n = normalize(&text);
        prop_assert!(!n.contains("  ") && n.trim() == n, "{:?}", n);
    }

    /// Folding never merges turns of two projects; the representative of each candidate is the
    /// earliest member of its group; the groups (as sets) do not depend on the candidates'
    /// order.
    #[test]
    fn groups_keep_projects_apart_start_at_the_earliest_and_ignore_order(
        items in proptest::collection::vec(item(), 1..24),
        order in any::<u64>(),
    ) {
        let reps = group(items.iter().map(to_sig));
        for (i, &r) in reps.iter().enumerate() {
            prop_assert!(r <= i, "representative {} after member {}", r, i);
            prop_assert_eq!(reps[r], r, "a representative represents itself");
            prop_assert_eq!(items[r].0, items[i].0, "one project per group");
            let first = reps.iter().position(|&x| x == r);
            prop_assert_eq!(first, Some(r), "the representative is the earliest member");
        }
        let mut perm: Vec<usize> = (0..items.len()).collect();
        let mut x = order | 1;
        for i in (1..perm.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            perm.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let shuffled = group(perm.iter().map(|&i| to_sig(&items[i])));
        prop_assert_eq!(partition(&reps, |i| i), partition(&shuffled, |j| perm[j]));
    }
}

/// A candidate: (project, words, vector). Texts are one of a few bases with one word changed,
/// so that near pairs, chains of them and far pairs all occur.
fn item() -> impl Strategy<Value = (u32, String, Option<Vec<f32>>)> {
    let bases = [
        "the ledger tests pass after the retry fix in the billing crate today",
        "the sync tests fail on the retry case with a timeout in the worker pool",
        "export flushes a batch when either limit is reached or the timer fires",
    ];
    (
        0u32..2,
        0usize..3,
        0usize..14,
        "[a-z]{2,6}",
        0u8..6,
        any::<bool>(),
    )
        .prop_map(move |(project, b, at, word, lean, has_vector)| {
            let mut words: Vec<&str> = bases[b].split(' ').collect();
            let at = at % words.len();
            words[at] = &word;
            let text = words.join(" ");
            let mut v = vec![0.0f32; 4];
            v[b] = 1.0;
            v[3] = f32::from(lean) * 0.1;
            (project, text, has_vector.then_some(v))
        })
}

fn to_sig(item: &(u32, String, Option<Vec<f32>>)) -> Sig {
    let vector = item.2.clone().map(|v| ("space".to_string(), v));
    Sig::new(item.0, &item.1, vector)
}

/// The groups as sorted sets of original indices (`orig` maps a position to its index).
fn partition(reps: &[usize], orig: impl Fn(usize) -> usize) -> Vec<Vec<usize>> {
    let mut by: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, &r) in reps.iter().enumerate() {
        by.entry(r).or_default().push(orig(i));
    }
    let mut out: Vec<Vec<usize>> = by
        .into_values()
        .map(|mut g| {
            g.sort_unstable();
            g
        })
        .collect();
    out.sort();
    out
}
