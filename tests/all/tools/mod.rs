//! Every tool of the toolbelt (except run_command and parse_structure, tested
//! with their own modules), through the public dispatch, on real temp trees
//! with hostile entries: symlinks out, FIFOs, sockets, odd names.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use luminos::ai::tools::fs::listing_lines;
use luminos::ai::tools::{Dispatch, ToolContext, ToolOutput, Toolbox, dispatch};
use luminos::cache::{Cache, CacheRoot, EntryKind};
use luminos::progress::Progress;
use luminos::redact::Redactor;
use serde_json::{Value, json};

use crate::support::fs::mkfifo;
use crate::support::secrets;

mod arguments;
mod cache_tools;
mod list_directory;
mod notes;
mod read_file;
mod redacted_output;

struct Env {
    tmp: tempfile::TempDir,
    target: PathBuf,
    cache: Cache,
    redactor: Redactor,
    progress: Progress,
}

/// [`env`] with the real redactor.
fn redacting_env() -> Env {
    Env {
        redactor: Redactor::new(),
        ..env()
    }
}

/// A target with ordinary and hostile entries, a secret outside it, and a
/// private cache.
fn env() -> Env {
    let tmp = crate::support::fs::temp_dir("luminos-tools-test-");
    let t = tmp.path().join("target");
    std::fs::create_dir_all(t.join("src/nested")).unwrap();
    std::fs::create_dir_all(t.join("empty")).unwrap();
    std::fs::write(t.join("README.md"), "# Demo\nA small demo.\n").unwrap();
    std::fs::write(t.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(t.join("src/blank"), "").unwrap();
    std::fs::write(
        t.join("src/logo.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01",
    )
    .unwrap();
    std::fs::write(t.join("src/latin1.txt"), b"caf\xe9 \xff\xfe ok\n").unwrap();
    std::fs::write(t.join(".hidden"), "h").unwrap();
    mkfifo(&t.join("src/pipe"));
    std::fs::write(tmp.path().join("secret.txt"), "TOP SECRET").unwrap();
    symlink(tmp.path().join("secret.txt"), t.join("src/leak")).unwrap();
    symlink("/", t.join("src/root")).unwrap();
    symlink("nested", t.join("src/inner")).unwrap();
    symlink("missing", t.join("src/broken")).unwrap();
    let target = std::fs::canonicalize(&t).unwrap();
    let root = CacheRoot::open(&tmp.path().join("cache")).unwrap();
    let id = root.investigation_id(&target, false).unwrap();
    let cache = Cache::open(&root, &id.id, &target).unwrap();
    Env {
        tmp,
        target,
        cache,
        redactor: Redactor::disabled(),
        progress: Progress::silent(),
    }
}

impl Env {
    fn ctx(&self) -> ToolContext<'_> {
        ToolContext {
            turn: 1,
            ..ToolContext::new(&self.cache, &self.redactor, &self.progress, "src")
        }
    }

    fn call_in(&self, scope: Toolbox, tool: &str, input: Value) -> ToolOutput {
        match dispatch(scope, tool, &input, &self.ctx()).unwrap() {
            Dispatch::Ran(output) => output,
            other => panic!("{tool} did not run: {other:?}"),
        }
    }

    fn call(&self, tool: &str, input: Value) -> ToolOutput {
        self.call_in(Toolbox::Dir, tool, input)
    }

    fn ok(&self, tool: &str, input: Value) -> String {
        let out = self.call(tool, input.clone());
        assert!(!out.is_error, "{tool}({input}) failed: {}", out.content);
        out.content
    }

    /// Write `content` at `rel` in the target.
    fn write(&self, rel: impl AsRef<Path>, content: impl AsRef<[u8]>) -> std::io::Result<()> {
        std::fs::write(self.target.join(rel), content)
    }

    /// The cache holds one flag: critical, on `path`, its finding
    /// containing `finding`.
    #[track_caller]
    fn assert_one_notice(&self, path: &str, finding: &str) {
        let flags = self.cache.read_flags();
        assert_eq!(flags.len(), 1, "{flags:?}");
        assert_eq!(flags[0].path, path);
        assert_eq!(flags[0].severity, luminos::report::Severity::Info);
        assert!(flags[0].finding.contains(finding), "{flags:?}");
    }

    /// Write `text`, which forges the end of the untrusted-data frame, to
    /// `rel` and read it back: the answer's only frame end is ours.
    #[track_caller]
    fn read_forged_frame_end(&self, rel: &str, text: &str) -> String {
        self.write(rel, text).unwrap();
        let out = self.ok("read_file", json!({ "path": rel }));
        assert_eq!(out.matches("</untrusted-data>").count(), 1, "{out}");
        out
    }

    fn err(&self, tool: &str, input: Value) -> String {
        let out = self.call(tool, input.clone());
        assert!(out.is_error, "{tool}({input}) should fail: {}", out.content);
        assert!(out.content.starts_with("Error"), "{}", out.content);
        out.content
    }

    /// `tool` refuses each input with an error that mentions the text given
    /// with it.
    #[track_caller]
    fn assert_refusals(&self, tool: &str, cases: &[(Value, &str)]) {
        for (input, expected) in cases {
            let err = self.err(tool, input.clone());
            assert!(err.contains(expected), "{tool}({input}): {err}");
        }
    }
}

/// Run `f` on another thread and fail (rather than hang) if it blocks.
fn within_seconds<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the tool call blocked")
}

/// `body` in the untrusted-data frame labelled `source`.
fn framed(source: &str, body: &str) -> String {
    format!("<untrusted-data source={source:?}>\n{body}\n</untrusted-data>")
}

/// The lines inside a framed result.
fn inside_frame(out: &str) -> String {
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("<untrusted-data "), "{out}");
    assert_eq!(lines.last(), Some(&"</untrusted-data>"), "{out}");
    lines[1..lines.len() - 1].join("\n")
}

fn file_data(rel: &str) -> Value {
    json!({"path": rel, "relative_path": rel, "size_bytes": 13, "category": "source",
           "summary": "Entry point.", "confidence": 0.9, "cached_at": "2025-01-01T00:00:00+00:00"})
}
