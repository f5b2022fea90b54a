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
    let lines = fsio::read_jsonl(&f.cache.dir().join("investigation.log"));
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
