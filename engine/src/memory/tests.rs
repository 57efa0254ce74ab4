use super::*;

fn write(dir: &Path, file: &str, text: &str) {
    std::fs::write(dir.join(file), text).unwrap();
}

#[test]
fn init_creates_templates_once_and_templates_are_skipped() {
    let d = tempfile::tempdir().unwrap();
    let files = init(d.path()).unwrap();
    assert_eq!(files.len(), 5);
    assert!(files.iter().all(|f| f.created));
    let dir = d.path().join(MEMORY_DIR);
    for f in FILES {
        let t = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(t.starts_with("# ") && t.contains("<!--"), "{f}");
        assert!(
            markdown_lines(&t).is_empty(),
            "{f} template must inject nothing"
        );
    }
    let st: SessionState =
        serde_json::from_slice(&std::fs::read(dir.join(SESSION_STATE_FILE)).unwrap()).unwrap();
    assert!(st.is_empty());
    // Fresh templates inject nothing at all.
    assert!(collect(&dir, &MemoryConfig::default()).is_empty());
    // Second init keeps edits.
    write(&dir, "gotchas.md", "# Gotchas\n- mine\n");
    let again = init(d.path()).unwrap();
    assert!(again.iter().all(|f| !f.created));
    assert_eq!(
        std::fs::read_to_string(dir.join("gotchas.md")).unwrap(),
        "# Gotchas\n- mine\n"
    );
}

#[test]
fn markdown_lines_drop_comments_headings_and_markers() {
    let text = "# T\n<!-- one\ntwo -->\n- a <!-- inline --> b\n\n## Sub\n* c\n- [ ] open\n- [x] done\nplain\n";
    assert_eq!(
        markdown_lines(text),
        vec!["a  b", "c", "[ ] open", "[x] done", "plain"]
    );
}

#[test]
fn newest_lines_first_within_per_file_caps_and_the_sub_budget() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let mut decisions = String::from(template("decisions.md").unwrap());
    for i in 0..50 {
        decisions.push_str(&format!("- decision number {i:02} with some words\n"));
    }
    write(dir, "decisions.md", &decisions);
    write(dir, "gotchas.md", template("gotchas.md").unwrap());
    write(dir, "feedback.md", "# Feedback\n- never commit\n");
    let cfg = MemoryConfig {
        file_chars: 300,
        ..MemoryConfig::default()
    };
    let lines = collect(dir, &cfg);
    let dec: Vec<&MemoryLine> = lines.iter().filter(|l| l.file == "decisions.md").collect();
    assert!(!dec.is_empty());
    assert!(dec.len() < 50);
    // The last (newest) entries, in file order.
    assert!(
        dec.last()
            .unwrap()
            .text
            .ends_with("decision number 49 with some words")
    );
    let first_kept: u32 = dec[0].text["[decisions] decision number ".len()..][..2]
        .parse()
        .unwrap();
    assert_eq!(first_kept as usize, 50 - dec.len());
    let dec_chars: usize = dec.iter().map(|l| l.text.chars().count() + 3).sum();
    assert!(dec_chars <= 300, "{dec_chars}");
    // Template file skipped, feedback included after decisions.
    assert!(!lines.iter().any(|l| l.file == "gotchas.md"));
    assert_eq!(lines.last().unwrap().text, "[feedback] never commit");
    // Sub-budget: a tiny one keeps only what fits, in priority order.
    let tiny = MemoryConfig {
        budget_chars: 120,
        ..cfg.clone()
    };
    let small = collect(dir, &tiny);
    let total: usize = small.iter().map(|l| l.text.chars().count() + 3).sum();
    assert!(total <= 120 && !small.is_empty());
    assert!(small.iter().all(|l| l.file == "decisions.md"));
    // Disabled.
    let off = MemoryConfig {
        enabled: false,
        ..cfg
    };
    assert!(collect(dir, &off).is_empty());
}

#[test]
fn session_state_lines_come_first() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let st = SessionState {
        task: "Make CI fast".into(),
        phase: "testing".into(),
        completed: vec!["a".into(), "b".into(), "c".into(), "d".into()],
        next_steps: vec!["profile fixtures".into(), "cache venv".into()],
        file_scope: vec!["ci.yml".into()],
        blockers: vec![],
        updated_at: None,
    };
    write(
        dir,
        SESSION_STATE_FILE,
        &serde_json::to_string(&st).unwrap(),
    );
    write(
        dir,
        "active-state.md",
        "# Active\nprofiling the scheduler tests\n",
    );
    let lines = collect(dir, &MemoryConfig::default());
    let texts: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        texts,
        vec![
            "[state] Task: Make CI fast",
            "[state] Phase: testing",
            "[state] Next: profile fixtures; cache venv",
            "[state] Files in scope: ci.yml",
            "[state] Done (latest 3 of 4): b; c; d",
            "[active-state] profiling the scheduler tests",
        ]
    );
    // Values: memory outranks archived turns; earlier files rank higher.
    assert!(lines.iter().all(|l| l.value > 900.0));
    assert!(lines[0].value > lines[5].value);
    // Broken JSON is skipped, not fatal.
    write(dir, SESSION_STATE_FILE, "{not json");
    let lines = collect(dir, &MemoryConfig::default());
    assert_eq!(lines.len(), 1);
}

/// Regression: a memory file planted in a parent directory (a shared /tmp, the folder a
/// repository was cloned into) was injected into the restore block.
#[test]
fn memory_files_in_parent_directories_are_never_read() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("repo");
    let sub = root.join("crates/a");
    std::fs::create_dir_all(&sub).unwrap();
    init(d.path()).unwrap(); // planted above the project
    assert_eq!(
        find_dir(root.to_str().unwrap(), &MemoryConfig::default()),
        None
    );
    init(&root).unwrap();
    assert_eq!(
        find_dir(root.to_str().unwrap(), &MemoryConfig::default()),
        Some(root.join(MEMORY_DIR))
    );
    assert_eq!(
        find_dir(sub.to_str().unwrap(), &MemoryConfig::default()),
        None,
        "a sub-folder is not the project"
    );
    assert_eq!(find_dir("", &MemoryConfig::default()), None);
}

/// Regression: a 3 GB sparse gotchas.md aborted the hook (allocation failure) and
/// session-state.json -> /dev/zero cost seconds and gigabytes; a FIFO hung SessionStart.
#[test]
fn huge_device_and_fifo_memory_files_are_skipped_in_bounded_time() {
    let d = tempfile::tempdir().unwrap();
    init(d.path()).unwrap();
    let dir = d.path().join(MEMORY_DIR);
    std::fs::write(dir.join("decisions.md"), "- use redb for the store\n").unwrap();
    std::fs::File::create(dir.join("gotchas.md"))
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    std::fs::remove_file(dir.join(SESSION_STATE_FILE)).ok();
    std::os::unix::fs::symlink("/dev/zero", dir.join(SESSION_STATE_FILE)).unwrap();
    std::fs::remove_file(dir.join("feedback.md")).ok();
    let st = std::process::Command::new("mkfifo")
        .arg(dir.join("feedback.md"))
        .status()
        .unwrap();
    assert!(st.success());
    let lines = collect(&dir, &MemoryConfig::default());
    let text: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(
        text,
        ["[decisions] use redb for the store"],
        "only the sane file"
    );
}

#[test]
fn claude_md_block_is_idempotent_and_removable() {
    use claude_md::*;
    let once = upsert("# My project\n\nRules.\n");
    assert!(once.starts_with("# My project\n\nRules.\n\n<!-- memctl:begin"));
    assert_eq!(upsert(&once), once);
    assert_eq!(once.matches(BEGIN).count(), 1);
    assert_eq!(remove(&once), "# My project\n\nRules.\n");
    assert_eq!(upsert(""), block());
    assert_eq!(remove(&block()), "");
    // An outdated block is replaced in place; text after it is kept.
    let old = format!("top\n\n{BEGIN}\nold text\n{END}\n\nbottom\n");
    let new = upsert(&old);
    assert!(new.contains("## Memory (memctl)") && !new.contains("old text"));
    assert!(new.starts_with("top\n\n") && new.ends_with("\nbottom\n"));
    assert_eq!(remove(&new), "top\n\nbottom\n");
    assert_eq!(remove("no block\n"), "no block\n");
}

#[test]
fn restore_block_injects_memory_first_within_the_total_budget() {
    let (_d, engine) = crate::prune::tests::engine_with_fixture();
    let sid = crate::prune::tests::SID;
    let project_dir = tempfile::tempdir().unwrap();
    let project = project_dir.path().to_str().unwrap().to_string();
    let cfg = crate::restore::RestoreConfig::default();
    // No archived session for this project: memory only (empty while the files are templates).
    init(project_dir.path()).unwrap();
    let r = crate::restore::restore_block(
        engine.core(),
        "new",
        &project,
        crate::restore::RestoreKind::Clear,
        &cfg,
        &Default::default(),
    )
    .unwrap();
    assert_eq!(r.text, "");
    let dir = project_dir.path().join(MEMORY_DIR);
    write(&dir, "decisions.md", "# D\n- use redb MultiWriter\n");
    let r = crate::restore::restore_block(
        engine.core(),
        "new",
        &project,
        crate::restore::RestoreKind::Clear,
        &cfg,
        &Default::default(),
    )
    .unwrap();
    assert!(
        r.text.contains(SECTION_TITLE) && r.text.contains("- [decisions] use redb MultiWriter")
    );
    // With an archived session: memory section first, then the turns; total within budget.
    let r = crate::restore::restore_block(
        engine.core(),
        sid,
        crate::prune::tests::PROJECT,
        crate::restore::RestoreKind::Compact,
        &cfg,
        &Default::default(),
    )
    .unwrap();
    assert!(
        !r.text.contains(SECTION_TITLE),
        "fixture project has no memory dir"
    );
    let mut long = String::from("# D\n");
    for i in 0..200 {
        long.push_str(&format!(
            "- decision {i} about the scheduler and its retry policy\n"
        ));
    }
    write(&dir, "decisions.md", &long);
    // Point the fixture session's project at the temp dir by restoring with it as project.
    let r = crate::restore::restore_block(
        engine.core(),
        sid,
        &project,
        crate::restore::RestoreKind::Compact,
        &cfg,
        &Default::default(),
    )
    .unwrap();
    let mem_at = r.text.find(SECTION_TITLE).expect("memory section");
    let turns_at = r.text.find("## Latest turns").expect("turns section");
    assert!(mem_at < turns_at);
    assert!(r.text.chars().count() <= cfg.budget.max_chars);
    let mem_part = &r.text[mem_at..turns_at];
    assert!(mem_part.chars().count() <= cfg.memory.budget_chars + SECTION_TITLE.len() + 8);
    assert!(mem_part.contains("decision 199 "), "newest entries kept");
    assert!(!mem_part.contains("decision 0 "), "oldest entries cut");
}

/// A cloned repository can carry links out of itself: their targets are never injected into
/// the model's context and never receive a note (a dangling link does not create its target).
#[cfg(unix)]
#[test]
fn links_out_of_the_memory_folder_are_neither_read_nor_written() {
    use std::os::unix::fs::symlink;
    let d = tempfile::tempdir().unwrap();
    let outside = d.path().join("home");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("secret.md"),
        "- private plan: move to Lisbon\n",
    )
    .unwrap();
    let repo = d.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    init(&repo).unwrap();
    let dir = repo.join(MEMORY_DIR);
    write(&dir, "gotchas.md", "- the real gotcha\n");
    std::fs::remove_file(dir.join("decisions.md")).unwrap();
    symlink(outside.join("secret.md"), dir.join("decisions.md")).unwrap();
    std::fs::remove_file(dir.join("feedback.md")).unwrap();
    symlink(outside.join("not-yet.md"), dir.join("feedback.md")).unwrap();
    let cfg = MemoryConfig::default();
    let lines = restore_lines(repo.to_str().unwrap(), &cfg);
    let all: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(all, ["[gotchas] the real gotcha"], "{all:?}");
    for kind in [note::NoteKind::Decision, note::NoteKind::Feedback] {
        let e = note::append_note(&repo, kind, "a note", &cfg, 0).unwrap_err();
        assert!(
            e.to_string().contains("link out of the memory folder"),
            "{e}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.md")).unwrap(),
        "- private plan: move to Lisbon\n"
    );
    assert!(!outside.join("not-yet.md").exists());

    // The whole `.memctl` folder linked elsewhere: nothing read, nothing written there.
    let repo2 = d.path().join("repo2");
    std::fs::create_dir_all(&repo2).unwrap();
    init(&outside).unwrap();
    write(&outside.join(MEMORY_DIR), "gotchas.md", "- from outside\n");
    symlink(outside.join(".memctl"), repo2.join(".memctl")).unwrap();
    assert!(restore_lines(repo2.to_str().unwrap(), &cfg).is_empty());
    let e = note::append_note(&repo2, note::NoteKind::Gotcha, "x", &cfg, 0).unwrap_err();
    assert!(e.to_string().contains("links out of the project"), "{e}");
}
