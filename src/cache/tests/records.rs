//! The investigation's other records: meta, the log, flags and named
//! documents.

use super::*;

#[test]
fn meta_is_written_and_merged() {
    let f = fixture();
    f.cache
        .write_meta("claude-x", "2025-01-01T00:00:00+00:00")
        .unwrap();
    let mut fields = Map::new();
    fields.insert("directories_investigated".into(), json!(7));
    fields.insert("end_time".into(), json!("later"));
    f.cache.update_meta(fields).unwrap();
    let meta = f.cache.read_json("meta.json").unwrap();
    let keys: Vec<&String> = meta.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "investigation_id",
            "target",
            "start_time",
            "model",
            "directories_investigated",
            "total_turns",
            "end_time"
        ]
    );
    assert_eq!(meta["investigation_id"], f.cache.id());
    assert_eq!(meta["target"], f.target.to_str().unwrap());
    assert_eq!(meta["directories_investigated"], 7);
    assert_eq!(meta["total_turns"], 0);
}

#[test]
fn a_run_without_redaction_is_remembered_in_meta() {
    let f = fixture();
    f.cache.write_meta("m", "t").unwrap();
    assert!(!f.cache.written_without_redaction());
    f.cache.mark_written_without_redaction().unwrap();
    assert!(f.cache.written_without_redaction());
    // Later updates keep it.
    let mut fields = Map::new();
    fields.insert("end_time".into(), json!("later"));
    f.cache.update_meta(fields).unwrap();
    assert!(f.cache.written_without_redaction());
    assert_eq!(f.cache.read_json("meta.json").unwrap()["model"], "m");
}

#[test]
fn the_log_drops_data_and_records_the_rest() {
    let f = fixture();
    f.cache.log_tool_call(
        "src",
        3,
        "write_cache",
        &json!({"cache_type": "file", "path": "a", "data": {"summary": "secret-ish"}}),
        2,
    );
    f.cache
        .log_tool_call("src", 4, "read_file", &json!({"path": "a"}), 10);
    let lines: Vec<serde_json::Value> = fsio::read_jsonl(&f.cache.dir().join("investigation.log"));
    assert_eq!(lines.len(), 2);
    let first = lines[0].as_object().unwrap();
    let keys: Vec<&String> = first.keys().collect();
    assert_eq!(
        keys,
        [
            "directory",
            "turn",
            "timestamp",
            "tool",
            "args",
            "result_length"
        ]
    );
    assert_eq!(lines[0]["args"], json!({"cache_type": "file", "path": "a"}));
    assert_eq!(lines[0]["turn"], 3);
    assert_eq!(lines[1]["result_length"], 10);
    assert!(lines[1]["timestamp"].as_str().unwrap().ends_with("+00:00"));
}

#[test]
fn flags_append_read_and_dedupe() {
    let f = fixture();
    let flag = |path: &str, sev: &str| Flag::new(path, "f", sev);
    f.cache.append_flag(&flag("a", "info")).unwrap();
    let added = f
        .cache
        .append_flags_unique(&[
            flag("a", "info"),
            flag("b", "critical"),
            flag("b", "critical"),
        ])
        .unwrap();
    assert_eq!(added, [flag("b", "critical")]);
    assert!(
        f.cache
            .append_flags_unique(&[flag("b", "critical")])
            .unwrap()
            .is_empty()
    );
    std::fs::OpenOptions::new()
        .append(true)
        .open(f.cache.dir().join("flags.jsonl"))
        .and_then(|mut file| {
            std::io::Write::write_all(&mut file, b"garbage\n[1]\n{\"finding\": \"x\"}\n")
        })
        .unwrap();
    let flags = f.cache.read_flags();
    assert_eq!(flags.len(), 3);
    assert_eq!(flags[2], Flag::new("general", "x", "info"));
}

#[test]
fn named_documents_round_trip_and_names_are_checked() {
    let f = fixture();
    assert_eq!(f.cache.read_json("plan.json"), None);
    f.cache
        .write_json("plan.json", &json!({"notes": ""}))
        .unwrap();
    assert_eq!(f.cache.read_json("plan.json"), Some(json!({"notes": ""})));
    for bad in [
        "../plan.json",
        "sub/plan.json",
        ".hidden.json",
        "plan.txt",
        ".json",
    ] {
        assert!(f.cache.write_json(bad, &json!({})).is_err(), "{bad}");
        assert_eq!(f.cache.read_json(bad), None);
    }
}

#[test]
fn a_damaged_flags_file_is_repaired_from_the_records() {
    let f = fixture();
    let flags: Vec<Flag> = ["a", "b", "c", "d"]
        .iter()
        .map(|p| Flag::new(*p, format!("finding in {p}"), "critical"))
        .collect();
    f.cache.append_flags_unique(&flags[..2]).unwrap();
    f.cache.append_flag(&flags[2]).unwrap();
    f.cache.append_flags_unique(&flags[3..]).unwrap();
    let journal = f.cache.dir().join(FLAGS_FILE);
    let whole = std::fs::read(&journal).unwrap();
    // Cut in the middle of the second line: one torn line, three lost.
    let second = whole.iter().position(|b| *b == b'\n').unwrap() + 10;
    std::fs::write(&journal, &whole[..second]).unwrap();
    assert_eq!(f.cache.read_flags(), flags[..1]);

    let checked = f.cache.read_flags_checked();
    assert_eq!(checked.flags, flags);
    let repair = checked.repair.unwrap();
    assert_eq!((repair.restored, repair.unreadable_lines), (3, 1));
    assert_eq!(repair.unrecovered(), 0);
    assert_eq!(
        repair.line(),
        "flags.jsonl was damaged and has been repaired: 3 flags restored from their records"
    );
    // The file itself is whole again, and the next check finds nothing.
    assert_eq!(f.cache.read_flags(), flags);
    let again = f.cache.read_flags_checked();
    assert_eq!((again.flags, again.repair), (flags, None));
}

#[test]
fn lines_without_records_get_them_and_garbage_is_said_to_be_lost() {
    let f = fixture();
    let journal = f.cache.dir().join(FLAGS_FILE);
    // As an older version (or the original) wrote it: no records.
    std::fs::write(
        &journal,
        "{\"path\": \"x\", \"finding\": \"old\", \"severity\": \"concern\"}\n",
    )
    .unwrap();
    let checked = f.cache.read_flags_checked();
    assert_eq!(checked.flags, [Flag::new("x", "old", "concern")]);
    assert_eq!(checked.repair, None, "a missing record is not damage");
    // The record written then restores the flag if the file is lost.
    std::fs::remove_file(&journal).unwrap();
    let checked = f.cache.read_flags_checked();
    assert_eq!(checked.flags, [Flag::new("x", "old", "concern")]);
    assert_eq!(checked.repair.unwrap().restored, 1);

    std::fs::write(&journal, "not json\n").unwrap();
    let repair = f.cache.read_flags_checked().repair.unwrap();
    assert_eq!(repair.unrecovered(), 0, "the one flag is restored");
    std::fs::write(
        &journal,
        "not json\n{\"path\": \"x\", \"finding\": \"old\", \"severity\": \"concern\"}\n",
    )
    .unwrap();
    let repair = f.cache.read_flags_checked().repair.unwrap();
    assert_eq!((repair.restored, repair.unrecovered()), (0, 1));
    assert!(
        repair
            .line()
            .ends_with("; 1 unreadable line could not be recovered")
    );
}

#[test]
fn a_write_that_fails_is_latched_for_every_clone() {
    let f = fixture();
    let clone = f.cache.clone();
    assert_eq!(clone.write_fault(), None);
    // A file where the entries' directory should be: writing fails, as
    // it would on a full or read-only disk (and whoever runs the test).
    let dirs = f.cache.dir().join("dirs");
    std::fs::remove_dir(&dirs).unwrap();
    std::fs::write(&dirs, "in the way").unwrap();
    let err = f
        .cache
        .write_entry(EntryKind::Dir, "src", &dir_entry("src"))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("Error writing cache"), "{err}");
    let fault = clone.write_fault().expect("latched");
    let said = fault.to_string();
    assert!(said.contains(&dirs.display().to_string()), "{said}");
    assert!(said.contains("no new API request was sent"), "{said}");
    // The first fault stays.
    f.cache.write_json("plan.json", &json!({})).unwrap();
    assert_eq!(clone.write_fault(), Some(fault));
}
