//! A held-out recall archive: one tool-heavy session of a buoy-telemetry data pipeline
//! ("saltmarsh"), written the way Claude Code writes a transcript, with eleven ordinary facts
//! said once each (in prompts, in answers, near the end of long Bash/Read outputs, at the end of
//! a long answer), plus low-overlap questions per fact and in-domain prompts that must not
//! recall.
//!
//! Why a second archive: the recall gate, ranking and passage selection were tuned on the
//! `recall_gate` set and the `recall-buried-facts` e2e scenario; this one was written without
//! looking at recall's scores, in another domain, to measure how well that tuning generalises.
//! Nothing in `engine/src/recall` may know about it.

use crate::transcript_gen::rng::Rng;
use serde_json::{Value, json};

/// The session id of the archive.
pub const SESSION: &str = "5a17a85e-0b0e-4c1d-9e2f-3a4b5c6d7e8f";

/// One buried fact.
#[derive(Debug, Clone, Copy)]
pub struct Fact {
    /// What kind of fact (for the report).
    pub kind: &'static str,
    /// Where it was said (for the report).
    pub place: &'static str,
    /// The exact text that must reach the model.
    pub needle: &'static str,
    /// Paraphrased questions with little word overlap with the fact's turn.
    pub questions: [&'static str; 2],
}

/// The facts, in the order they are said.
pub const FACTS: &[Fact] = &[
    Fact {
        kind: "host",
        place: "user prompt",
        needle: "kafka-stg-03.ewr2.tidelake.io",
        questions: [
            "which machine is the pre-prod message bus running on now?",
            "where should the consumer connect when we test before release?",
        ],
    },
    Fact {
        kind: "person",
        place: "user prompt",
        needle: "Ingrid Halvorsen",
        questions: [
            "who has to approve the sensor correction values before we ship?",
            "whose sign-off do we need for the offsets?",
        ],
    },
    Fact {
        kind: "ticket",
        place: "end of a 3.6 KB git log (Bash)",
        needle: "DATA-2291",
        questions: [
            "what's the tracker reference for the duplicate rows we got after re-importing old data?",
            "which bug id was that revert about?",
        ],
    },
    Fact {
        kind: "flag",
        place: "assistant reply",
        needle: "SALTMARSH_STRICT_SCHEMA",
        questions: [
            "what's the name of the setting you came up with to make the loader picky about incomplete records?",
            "which environment switch turns on the refusal of half-empty rows?",
        ],
    },
    Fact {
        kind: "figure with unit",
        place: "benchmark output (Bash)",
        needle: "2.73 GiB",
        questions: [
            "at its worst, how much RAM did that merging step eat?",
            "what was the memory high-water mark in the perf run?",
        ],
    },
    Fact {
        kind: "colour choice",
        place: "assistant reply",
        needle: "Okabe-Ito",
        questions: [
            "which set of hues did you recommend for the graphs?",
            "what was the colour-blind friendly scheme called again?",
        ],
    },
    Fact {
        kind: "version",
        place: "user prompt",
        needle: "1.1.3",
        questions: [
            "which release of the embedded SQL engine are we stuck on?",
            "what version must we stay on for the analytics database, and why?",
        ],
    },
    Fact {
        kind: "file path",
        place: "end of a 4 KB config file (Read)",
        needle: "/srv/saltmarsh/deadletter/quarantine",
        questions: [
            "where on disk do the refused records end up?",
            "in which folder do bad rows get parked?",
        ],
    },
    Fact {
        kind: "command",
        place: "end of a long (>256-token) assistant reply",
        needle: "make backfill DAY=2026-03-14 SHARDS=6",
        questions: [
            "what was the exact invocation for re-running one date?",
            "remind me how to redo a single night that went wrong",
        ],
    },
    Fact {
        kind: "date",
        place: "user prompt",
        needle: "2027-04-30",
        questions: [
            "when is the agency expecting our numbers?",
            "what's the due date for the regulator?",
        ],
    },
    Fact {
        kind: "library",
        place: "assistant reply",
        needle: "ciso8601",
        questions: [
            "what did you say we should use instead to read the time strings faster?",
            "which package was your pick for the slow timestamp handling?",
        ],
    },
];

/// In-domain prompts that must not recall: requests about the current work, acknowledgements.
pub const NEGATIVES: &[&str] = &[
    "now add a unit test for the parser",
    "run the linter again",
    "ok",
    "thanks, go on",
    "commit this with a short message",
    "format everything with black",
    "looks good, push it",
    "undo your last edit",
    "can you make that function shorter?",
    "rename the variable to something clearer",
    "let's move on to the next task",
    "write a docstring for the new script",
];

/// One tool call of a turn: name, input, output.
struct Call {
    name: &'static str,
    input: Value,
    output: String,
}

/// One turn: the prompt, its tool calls, the final answer.
struct Turn {
    prompt: String,
    calls: Vec<Call>,
    answer: String,
}

fn bash(cmd: &str, out: String) -> Call {
    Call {
        name: "Bash",
        input: json!({"command": cmd}),
        output: out,
    }
}

fn read(cwd: &str, file: &str, content: &str) -> Call {
    let numbered: String = content
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{:>6}\u{2192}{l}\n", i + 1))
        .collect();
    Call {
        name: "Read",
        input: json!({"file_path": format!("{cwd}/{file}")}),
        output: numbered,
    }
}

fn turn(prompt: &str, calls: Vec<Call>, answer: &str) -> Turn {
    Turn {
        prompt: prompt.into(),
        calls,
        answer: answer.into(),
    }
}

const STATIONS: &[&str] = &[
    "B017", "B022", "B031", "B044", "B058", "B063", "B071", "B089",
];

/// `n` lines of an ingest log.
fn ingest_log(rng: &mut Rng, n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let st = STATIONS[rng.below(STATIONS.len() as u64) as usize];
        let lvl = if rng.below(9) == 0 { "WARN" } else { "INFO" };
        s.push_str(&format!(
            "2026-11-17T{:02}:{:02}:{:02}Z {lvl} ingest station={st} batch={} rows={} rejected={} lag_ms={}\n",
            i / 60 % 24,
            i % 60,
            rng.below(60),
            4000 + i,
            200 + rng.below(800),
            rng.below(4),
            20 + rng.below(400)
        ));
    }
    s
}

/// A git log of `n` commits whose third-to-last line mentions the ticket.
fn git_log(rng: &mut Rng, n: usize) -> String {
    let subjects = [
        "dags: move nightly start to 02:10 UTC",
        "ingest: batch commits every 500 messages",
        "transform: vectorise the salinity correction",
        "load: reuse the warehouse connection per partition",
        "tests: fixtures for the B0xx stations",
        "ci: cache the wheel directory",
        "docs: station onboarding checklist",
        "transform: clamp water temperature to sensor range",
        "ingest: log consumer lag every minute",
        "load: write partitions by station and day",
    ];
    let mut lines = Vec::new();
    for i in 0..n {
        lines.push(format!(
            "{:07x} {}",
            rng.next_u64() & 0xfff_ffff,
            subjects[i % subjects.len()]
        ));
    }
    let k = n - 3;
    lines[k] = format!(
        "{:07x} load: revert the dedupe window change (DATA-2291: doubled readings after the March backfill)",
        rng.next_u64() & 0xfff_ffff
    );
    lines.join("\n")
}

/// The loader config: ~4 KB, the reject section last.
fn loader_toml() -> String {
    let mut s = String::from("# saltmarsh loader settings\n[warehouse]\nengine = \"duckdb\"\n");
    s.push_str("path = \"data/warehouse.duckdb\"\nthreads = 4\nmemory_limit = \"6GB\"\n\n");
    for st in STATIONS {
        s.push_str(&format!(
            "[stations.{st}]\nenabled = true\ncalibration = \"cal/{st}.json\"\nmax_gap_minutes = 30\n\
             partition = \"station={st}/day={{day}}\"\nlate_arrival_hours = 6\n\n"
        ));
    }
    s.push_str("[batching]\nrows_per_batch = 50000\nflush_seconds = 30\nretries = 5\nbackoff = \"exponential\"\n\n");
    s.push_str(
        "[rejects]\n# rows that fail validation are written here, one parquet file per batch\n\
         quarantine_dir = \"/srv/saltmarsh/deadletter/quarantine\"\nkeep_days = 21\n",
    );
    s
}

/// Benchmark output of the join stage; the memory peak is one figure among many.
fn join_bench(rng: &mut Rng) -> String {
    let mut s = String::from("join stage benchmark (3 runs, 14 days x 8 stations)\n");
    s.push_str("run  rows_in     rows_out    wall_s  rows_per_s\n");
    for r in 1..=3 {
        s.push_str(&format!(
            "{r}    {}  {}  {}.{}    {}\n",
            11_800_000 + rng.below(90_000),
            11_790_000 + rng.below(90_000),
            300 + rng.below(20),
            rng.below(10),
            37_000 + rng.below(2_000)
        ));
    }
    s.push_str(
        "\nstage breakdown (mean of 3):\n  read parquet      41.2 s\n  calibrate         88.9 s\n",
    );
    s.push_str("  join stations     132.4 s\n  write partitions  44.0 s\n\n");
    s.push_str("peak RSS 2.73 GiB (join stations), spill to disk: none\nGC pauses: 0\n");
    s
}

/// The long answer whose last line is the backfill command.
fn backfill_answer() -> String {
    let mut s = String::from(
        "Short version: the nightly DAG is idempotent per (station, day) partition, so a failed \
         night can be redone without touching the neighbouring days.\n\n",
    );
    for (h, body) in [
        (
            "Why it is safe",
            "the loader writes each partition to a temporary directory and swaps it in with a \
             rename, so a half-written partition is never visible to the dashboards; the \
             transform stage reads only the raw messages of that day from the archive bucket, \
             never from the live topic, so the replay does not compete with the consumer.",
        ),
        (
            "What it costs",
            "about twenty minutes for all eight stations on the batch host, most of it in the \
             calibration step; the warehouse stays readable the whole time and the dashboards \
             simply see the old partition until the swap.",
        ),
        (
            "What to check afterwards",
            "row counts per station against the raw message counts, the rejected-row report, \
             and the lag metric, which will show a spike while the replay runs and should fall \
             back to normal once it finishes; if counts differ by more than half a percent, \
             look at the quarantine before re-running anything.",
        ),
        (
            "What not to do",
            "do not delete the partition by hand first (the swap handles it), do not run two \
             replays of overlapping days at once, and do not run it while the nightly job is \
             in progress, since both take the same warehouse lock and one of them will time out.",
        ),
    ] {
        s.push_str(&format!("**{h}**: {body}\n\n"));
    }
    s.push_str("The command, from the repository root:\n\nmake backfill DAY=2026-03-14 SHARDS=6\n");
    s
}

fn pytest_output(rng: &mut Rng, files: &[&str]) -> String {
    let mut s = String::from(
        "============================= test session starts ==============================\nplatform linux -- Python 3.12.7, pytest-8.3.3\ncollected 212 items\n\n",
    );
    for f in files {
        let n = 10 + rng.below(30) as usize;
        s.push_str(&format!(
            "{f} {} [{:>3}%]\n",
            ".".repeat(n),
            10 + rng.below(90)
        ));
    }
    s.push_str(
        "\n============================= 212 passed in 14.82s =============================\n",
    );
    s
}

fn turns(cwd: &str, rng: &mut Rng) -> Vec<Turn> {
    let tests = [
        "tests/test_ingest.py",
        "tests/test_calibrate.py",
        "tests/test_loader.py",
        "tests/test_dags.py",
        "tests/test_schema.py",
        "tests/test_stations.py",
    ];
    let listing: String = [
        "dags/nightly.py",
        "dags/hourly.py",
        "saltmarsh/__init__.py",
        "saltmarsh/ingest/kafka_source.py",
        "saltmarsh/ingest/decode.py",
        "saltmarsh/transform/calibrate.py",
        "saltmarsh/transform/qc.py",
        "saltmarsh/load/warehouse.py",
        "saltmarsh/load/partitions.py",
        "config/loader.toml",
        "config/staging.yaml",
        "config/prod.yaml",
        "models/staging/stg_readings.sql",
        "models/marts/station_daily.sql",
        "bench/join_bench.py",
        "Makefile",
        "README.md",
    ]
    .iter()
    .chain(tests.iter())
    .map(|f| format!("./{f}\n"))
    .collect();
    let calibrate = "\"\"\"Per-station calibration of raw buoy readings.\"\"\"\nimport json\nfrom pathlib import Path\n\n\
        OFFSETS = Path(\"cal\")\n\n\ndef load_offsets(station: str) -> dict:\n    return json.loads((OFFSETS / f\"{station}.json\").read_text())\n\n\n\
        def correct(reading: dict, offsets: dict) -> dict:\n    out = dict(reading)\n    out[\"temp_c\"] = reading[\"temp_c\"] + offsets[\"temp\"]\n\
        \x20   out[\"salinity_psu\"] = reading[\"salinity_psu\"] * offsets[\"sal_gain\"]\n    # TODO: pressure drift per month\n    return out\n";
    let warehouse = "\"\"\"Write calibrated readings into DuckDB partitions.\"\"\"\nimport duckdb\n\n\
        def write_partition(con, station, day, rows):\n    tmp = f\"tmp/{station}-{day}\"\n    con.execute(\"COPY rows TO ? (FORMAT parquet)\", [tmp])\n\
        \x20   swap_in(tmp, station, day)\n\n\ndef swap_in(tmp, station, day):\n    ...\n";
    vec![
        turn("I'm back on the saltmarsh buoy pipeline after a while. Give me the lay of the land.",
            vec![bash("find . -type f | sort", listing)],
            "It's a three-stage pipeline: ingest (Kafka consumer), transform (calibration and QC), load (DuckDB partitions), driven by two DAGs, with dbt models on top."),
        turn("Read the README.", vec![read(cwd, "README.md", "# saltmarsh\n\nTelemetry pipeline for the coastal buoy network.\n\n## Stages\n- ingest: consume raw messages\n- transform: calibrate and QC\n- load: write parquet partitions\n\n## Running\n`make nightly` runs the whole chain for yesterday.\n")],
            "The README covers the three stages and `make nightly`; nothing about operations."),
        turn("Show me the nightly DAG.", vec![read(cwd, "dags/nightly.py", "from airflow import DAG\nfrom airflow.operators.bash import BashOperator\n\nwith DAG(\"nightly\", schedule=\"10 2 * * *\") as dag:\n    ingest = BashOperator(task_id=\"ingest\", bash_command=\"make ingest\")\n    transform = BashOperator(task_id=\"transform\", bash_command=\"make transform\")\n    load = BashOperator(task_id=\"load\", bash_command=\"make load\")\n    ingest >> transform >> load\n")],
            "A linear ingest → transform → load chain at 02:10 UTC."),
        turn("Heads-up: the staging Kafka cluster was moved last week. The consumer in staging has to use kafka-stg-03.ewr2.tidelake.io as its bootstrap server now, same port. No change needed yet, just keep it in mind.",
            vec![], "Noted. I won't touch config/staging.yaml until you ask."),
        turn("Run the unit tests.", vec![bash("pytest -q", pytest_output(rng, &tests))], "All 212 tests pass in about 15 s."),
        turn("Search the transform package for TODO markers.",
            vec![Call { name: "Grep", input: json!({"pattern": "TODO", "path": "saltmarsh/transform"}), output: "saltmarsh/transform/calibrate.py:17:    # TODO: pressure drift per month\nsaltmarsh/transform/qc.py:40:    # TODO: flag stuck sensors\n".into() }],
            "Two TODOs: pressure drift in calibrate.py and stuck-sensor detection in qc.py."),
        turn("Read saltmarsh/transform/calibrate.py.", vec![read(cwd, "saltmarsh/transform/calibrate.py", calibrate)],
            "It loads per-station offsets from cal/<station>.json and applies a temperature offset and a salinity gain."),
        turn("One process thing before anyone edits calibrate.py: the calibration offsets must be signed off by Ingrid Halvorsen from the oceanography group before we merge anything there.",
            vec![], "Understood: no merge touching calibrate.py without her approval."),
        turn("Show the last 100 lines of the ingest log.", vec![bash("tail -n 100 logs/ingest.log", ingest_log(rng, 100))],
            "Steady ingest; a few WARN lines with higher lag, no errors."),
        turn("Count rejected records per station in that log.", vec![bash("awk '{print $4, $7}' logs/ingest.log | sort | uniq -c | head", STATIONS.iter().map(|s| format!("{:>5} station={s}\n", rng.below(40))).collect())],
            "Rejections are spread evenly, nothing station-specific."),
        turn("Show the git log of the last month.", vec![bash("git log --oneline --since=1.month", git_log(rng, 60))],
            "Mostly loader and DAG work, a few CI and docs commits."),
        turn("Read the warehouse loader.", vec![read(cwd, "saltmarsh/load/warehouse.py", warehouse)],
            "It writes each partition to a temp dir and swaps it in."),
        turn("How would you make the loader stop accepting rows with missing columns, without breaking the old stations that still send the short format?",
            vec![], "I'd add an opt-in strictness switch read at start-up: an environment variable SALTMARSH_STRICT_SCHEMA, default 0. With it set to 1, the loader validates every row against the full schema and routes short rows to the reject path instead of filling nulls; old stations keep working until we flip it per environment."),
        turn("Run the benchmark for the join stage.", vec![bash("python bench/join_bench.py", join_bench(rng))],
            "Throughput is about 37-39k rows/s, and the join of stations dominates the wall time."),
        turn("List the dbt models.", vec![Call { name: "Glob", input: json!({"pattern": "models/**/*.sql"}), output: "models/staging/stg_readings.sql\nmodels/marts/station_daily.sql\n".into() }],
            "Two models: a staging view and a daily mart."),
        turn("Read models/staging/stg_readings.sql.", vec![read(cwd, "models/staging/stg_readings.sql", "select\n    station,\n    ts::timestamp as ts,\n    temp_c,\n    salinity_psu\nfrom {{ source('raw', 'readings') }}\nwhere ts is not null\n")],
            "A thin typed view over the raw readings."),
        turn("We need charts for the station health dashboard. What colours should the plots use so that everyone on the team can read them?",
            vec![], "Use the Okabe-Ito palette: orange #E69F00, sky blue #56B4E9, bluish green #009E73, yellow #F0E442, blue #0072B2, vermillion #D55E00 and reddish purple #CC79A7. It stays distinguishable under the common colour-vision deficiencies, and eight stations fit with black as the eighth."),
        turn("Show the Makefile.", vec![read(cwd, "Makefile", "nightly: ingest transform load\ningest:\n\tpython -m saltmarsh.ingest\ntransform:\n\tpython -m saltmarsh.transform\nload:\n\tpython -m saltmarsh.load\nbackfill:\n\tpython -m saltmarsh.backfill --day $(DAY) --shards $(SHARDS)\n")],
            "Targets for each stage, `nightly`, and a parametrised `backfill`."),
        turn("How much disk do the parquet partitions use?", vec![bash("du -sh data/partitions/*", STATIONS.iter().map(|s| format!("{}M\tdata/partitions/station={s}\n", 300 + rng.below(500))).collect())],
            "About 4.5 GB in total, spread evenly over the stations."),
        turn("Important: keep DuckDB pinned at 1.1.3. The 1.2 line broke our parquet reader on nested structs, so don't let the bot bump it.",
            vec![], "Will do; I'll leave that pin alone and close any automated bump."),
        turn("Read the loader config.", vec![read(cwd, "config/loader.toml", &loader_toml())],
            "Per-station settings, batching and retries, and the reject handling at the end."),
        turn("Search the repo for 'retry'.", vec![Call { name: "Grep", input: json!({"pattern": "retry", "path": "."}), output: "saltmarsh/ingest/kafka_source.py:58:        retry(self._poll, attempts=5)\nsaltmarsh/load/warehouse.py:12:# retry is handled by the DAG\n".into() }],
            "Retries live in the consumer poll and in the DAG."),
        turn("How do I redo history if the nightly run fails?", vec![], &backfill_answer()),
        turn("Run the linter.", vec![bash("ruff check .", "saltmarsh/ingest/decode.py:3:8: F401 [*] `struct` imported but unused\nsaltmarsh/transform/qc.py:5:1: F401 [*] `math` imported but unused\nFound 2 errors.\n[*] 2 fixable with the `--fix` option.\n".into())],
            "Two unused imports, both auto-fixable."),
        turn("Fix the two unused imports it found.", vec![Call { name: "Edit", input: json!({"file_path": format!("{cwd}/saltmarsh/ingest/decode.py"), "old_string": "import struct\n", "new_string": ""}), output: "The file has been updated.".into() }],
            "Removed both unused imports; ruff is clean now."),
        turn("The regulator wants the Q1 water-quality submission by 2027-04-30 at the latest, so plan the work to finish a week earlier.",
            vec![], "Noted. Working back from that: schema freeze three weeks before, dry run two weeks before, final export the week before."),
        turn("Read tests/test_calibrate.py.", vec![read(cwd, "tests/test_calibrate.py", "from saltmarsh.transform.calibrate import correct\n\n\ndef test_temp_offset():\n    assert correct({\"temp_c\": 10.0, \"salinity_psu\": 35.0}, {\"temp\": 0.5, \"sal_gain\": 1.0})[\"temp_c\"] == 10.5\n")],
            "One test for the temperature offset; the salinity gain is untested."),
        turn("Run only the calibration tests.", vec![bash("pytest -q tests/test_calibrate.py", "..........                                                               [100%]\n10 passed in 0.41s\n".into())],
            "10 passed."),
        turn("Show the schema of the readings table.", vec![bash("duckdb data/warehouse.duckdb -c 'describe readings'", "column_name   column_type\nstation       VARCHAR\nts            TIMESTAMP\ntemp_c        DOUBLE\nsalinity_psu  DOUBLE\npressure_dbar DOUBLE\n".into())],
            "Five columns: station, ts, temperature, salinity, pressure."),
        turn("How many rows per station landed yesterday?", vec![bash("duckdb data/warehouse.duckdb -c \"select station, count(*) from readings where ts >= current_date - 1 group by 1\"", STATIONS.iter().map(|s| format!("{s}  {}\n", 8000 + rng.below(700))).collect())],
            "Between 8,000 and 8,700 rows per station, as expected for 10-second sampling."),
        turn("Write a small script scripts/station_gaps.py that reports hours with no readings per station.",
            vec![Call { name: "Write", input: json!({"file_path": format!("{cwd}/scripts/station_gaps.py"), "content": "import duckdb\n\nQ = \"select station, date_trunc('hour', ts) h, count(*) from readings group by 1, 2 having count(*) = 0\"\nprint(duckdb.connect('data/warehouse.duckdb').sql(Q))\n"}), output: "File created successfully.".into() }],
            "Created scripts/station_gaps.py."),
        turn("Run it.", vec![bash("python scripts/station_gaps.py", "station  h                    count\nB044     2026-11-16 03:00:00  0\nB071     2026-11-16 14:00:00  0\n".into())],
            "Two empty hours, B044 at 03:00 and B071 at 14:00 on the 16th."),
        turn("Parsing timestamps is the slowest part of ingest according to the profile. Any idea?",
            vec![], "Swap dateutil.parser for ciso8601: our timestamps are strict RFC 3339, and it parses those roughly ten times faster, in C, without the guessing dateutil does."),
        turn("Profile the ingest step again.", vec![bash("python -m cProfile -s cumtime -m saltmarsh.ingest --dry-run | head -30", (0..30).map(|i| format!("{:>8} {:>8.3} {:>8.3}  saltmarsh/ingest/decode.py:{}(decode_{i})\n", 1000 + rng.below(9000), rng.below(1000) as f64 / 1000.0, rng.below(5000) as f64 / 1000.0, 10 + i)).collect())],
            "Decoding dominates now; the consumer is mostly waiting on the broker."),
        turn("Read saltmarsh/ingest/kafka_source.py.", vec![read(cwd, "saltmarsh/ingest/kafka_source.py", "from confluent_kafka import Consumer\n\n\nclass Source:\n    def __init__(self, conf):\n        self._c = Consumer(conf)\n\n    def _poll(self):\n        return self._c.poll(1.0)\n")],
            "A thin wrapper around confluent_kafka's Consumer."),
        turn("Write NOTES.md with headings for what we touched today, no details.",
            vec![Call { name: "Write", input: json!({"file_path": format!("{cwd}/NOTES.md"), "content": "# Notes\n\n## Staging\n## Calibration\n## Loader\n## Dashboard\n## Ingest speed\n"}), output: "File created successfully.".into() }],
            "Created NOTES.md with five headings."),
        turn("Run the full test suite once more.", vec![bash("pytest -q", pytest_output(rng, &tests))], "Still green: 212 passed."),
        turn("Thanks, that's it for now. Summarise the day in two sentences.", vec![],
            "We explored the pipeline, ran tests, the linter and a benchmark, added a gaps script and notes. Two unused imports were removed."),
    ]
}

/// The session as transcript lines (JSONL), `cwd` as its project, deterministic for `seed`.
pub fn session_jsonl(cwd: &str, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    let mut n = 0u32;
    let mut parent: Option<String> = None;
    let mut push = |out: &mut String, mut v: Value, parent: &mut Option<String>, minute: usize| {
        n += 1;
        let uuid = format!("00000000-0000-4000-9000-{n:012}");
        v["sessionId"] = json!(SESSION);
        v["cwd"] = json!(cwd);
        v["uuid"] = json!(uuid);
        v["parentUuid"] = json!(parent.clone());
        v["timestamp"] = json!(format!(
            "2026-11-18T{:02}:{:02}:{:02}.000Z",
            9 + minute / 60,
            minute % 60,
            n % 60
        ));
        out.push_str(&v.to_string());
        out.push('\n');
        *parent = Some(uuid);
    };
    for (i, t) in turns(cwd, &mut rng).into_iter().enumerate() {
        push(
            &mut out,
            json!({"type": "user", "message": {"role": "user", "content": t.prompt}}),
            &mut parent,
            i * 2,
        );
        for (k, c) in t.calls.into_iter().enumerate() {
            let id = format!("toolu_{i:03}_{k}");
            push(
                &mut out,
                json!({"type": "assistant", "message": {"id": format!("msg_{i}_{k}"), "type": "message", "role": "assistant",
                "content": [{"type": "tool_use", "id": id, "name": c.name, "input": c.input}]}}),
                &mut parent,
                i * 2,
            );
            let result = if c.name == "Bash" {
                json!({"stdout": c.output, "stderr": "", "interrupted": false, "isImage": false})
            } else {
                json!(c.output)
            };
            push(
                &mut out,
                json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": c.output, "is_error": false}]},
                "toolUseResult": result}),
                &mut parent,
                i * 2,
            );
        }
        push(
            &mut out,
            json!({"type": "assistant", "message": {"id": format!("msg_{i}_end"), "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": t.answer}]}}),
            &mut parent,
            i * 2 + 1,
        );
    }
    out
}
