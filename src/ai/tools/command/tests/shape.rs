//! The tool's schema, description and registration, and the shape of its
//! rendered results (cut output, notes, split characters).

use super::*;

#[test]
fn schema_is_the_original_shape() {
    let tool = RunCommand::new();
    assert_eq!(tool.spec().name, "run_command");
    assert_eq!(tool.spec().toolboxes, crate::ai::tools::READERS);
    assert!(!tool.ends_loop());
    let schema = tool.spec().input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["command"]));
    let properties = schema["properties"].as_object().unwrap();
    assert_eq!(properties.keys().collect::<Vec<_>>(), ["command"]);
    assert_eq!(properties["command"]["type"], "string");
    assert!(properties["command"]["description"].is_string());
    let keys: Vec<_> = schema.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["type", "properties", "required"]);
}

#[test]
fn description_states_the_glob_and_shell_rules() {
    let d = RunCommand::new().spec().description;
    for needle in [
        "no shell",
        "globs",
        "expanded inside the target",
        "15 seconds",
        "64 KiB",
    ] {
        assert!(d.contains(needle), "{needle}");
    }
    for program in spec::WHITELIST {
        assert!(d.contains(program), "{program}");
    }
}

#[test]
fn registered_once_for_the_dir_loop() {
    assert_eq!(
        REGISTRY
            .iter()
            .filter(|t| t.spec().name == "run_command")
            .count(),
        1
    );
    assert!(names(Toolbox::Dir).contains(&"run_command"));
    assert!(!names(Toolbox::Survey).contains(&"run_command"));
}

fn exited(code: i32) -> exec::Ending {
    use std::os::unix::process::ExitStatusExt;
    exec::Ending::Exited(std::process::ExitStatus::from_raw(code << 8))
}

fn execution(ending: exec::Ending, stdout: &str, stderr: &str, cut: bool) -> exec::Execution {
    exec::Execution {
        ending,
        stdout: stdout.as_bytes().to_vec(),
        stdout_cut: cut,
        stderr: stderr.as_bytes().to_vec(),
    }
}

const LIMITS: exec::Limits = exec::Limits {
    timeout: DEFAULT_TIMEOUT,
    output_cap: OUTPUT_CAP,
};

/// What the model reads for `execution`, with `notes` appended.
fn model_reads(execution: exec::Execution, notes: &[String]) -> ToolOutput {
    match render(execution, LIMITS, notes) {
        Ok(rendered) => rendered.plain(),
        Err(error) => error,
    }
}

#[test]
fn render_follows_the_original_shape() {
    // (exit code, stdout, stderr) and what the model reads.
    for (code, stdout, stderr, shown) in [
        (0, "  a\nb\n\n", "", "a\nb"),
        (0, "", "", "(no output)"),
        (1, "", "", "(no output)"),
        // stderr is shown only when the program failed.
        (0, "x\n", "warn\n", "x"),
        (2, "x\n", " bad thing \n", "x\n\n(stderr: bad thing)"),
        (2, "", "bad", "(stderr: bad)"),
    ] {
        assert_eq!(
            model_reads(execution(exited(code), stdout, stderr, false), &[]),
            ToolOutput::ok(shown),
            "exit {code}, stdout {stdout:?}, stderr {stderr:?}"
        );
    }
    let timed_out = model_reads(execution(exec::Ending::TimedOut, "partial", "", false), &[]);
    assert!(timed_out.is_error);
    assert!(timed_out.content.contains("timed out after 15 seconds"));
}

#[test]
fn render_marks_cut_output_and_appends_notes() {
    let out = model_reads(execution(exited(0), "data", "", true), &["a note".into()]);
    assert!(!out.is_error);
    assert!(out.content.starts_with("data\n[output cut at 64 KiB"));
    assert!(out.content.ends_with("\n(note: a note)"));
    let empty = model_reads(execution(exited(0), "", "", false), &["n".into()]);
    assert_eq!(empty.content, "(no output)\n(note: n)");
    // A cut drops the partial last line, so a secret split by the cap is
    // never shown in part.
    let cut = model_reads(execution(exited(0), "one\ntwo\nghp_abc", "", true), &[]);
    assert!(
        cut.content.starts_with("one\ntwo\n[output cut"),
        "{}",
        cut.content
    );
}

#[test]
fn decode_drops_a_character_split_by_the_cut() {
    let bytes = "aé".as_bytes();
    assert_eq!(decode(&bytes[..2], true), "a");
    assert_eq!(decode(&bytes[..2], false), "a\u{FFFD}");
    assert_eq!(decode(b"a\xffb", true), "a\u{FFFD}b");
}
