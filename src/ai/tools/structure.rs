//! The `parse_structure` tool: from the path the model names to the JSON it
//! reads back. The outline itself is [`crate::outline`]'s.
//!
//! Path rules are `read_file`'s: the path must resolve inside the target
//! after following symlinks ([`sandbox::resolve`]) and name a regular file.
//! Directories, FIFOs, sockets and devices are refused from their metadata,
//! before anything opens them, and the open itself is non-blocking, so a
//! FIFO swapped in at the last moment cannot hang the loop either.
//!
//! Files over [`MAX_FILE_BYTES`] are refused: anything that large is
//! generated or minified, and its outline would be capped anyway.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use serde::Deserialize;

use crate::ai::tools::input::Text;
use crate::ai::tools::sandbox::{self, SandboxError};
use crate::ai::tools::schema::{object, text};
use crate::ai::tools::{FatalToolError, Tool, ToolContext, ToolOutput, ToolSpec};
use crate::outline::{MAX_FILE_BYTES, ParseError, SUPPORTED_EXTENSIONS, Structure};
// Where the tool's users have found the outline's entry points.
pub use crate::outline::{Language, parse_source};

const DESCRIPTION: &str = "A source file's outline as JSON: function signatures, classes \
with methods, imports, line count, docstrings, comment ratio. For .py, .js, .jsx, .mjs, .ts, \
.tsx, .rs and .go files up to 2 MiB.";

/// The `parse_structure` tool.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ParseStructure;

/// `parse_structure`'s input.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ParseStructureInput {
    path: Text,
}

impl Tool for ParseStructure {
    type Input = ParseStructureInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "parse_structure",
            description: DESCRIPTION,
            toolboxes: super::READERS,
            schema: || object([("path", text("The source file."))], &["path"]),
        }
    }

    fn run(
        &self,
        ctx: &ToolContext<'_>,
        input: ParseStructureInput,
    ) -> Result<ToolOutput, FatalToolError> {
        // The outline shows strings cut out of the file (signatures with
        // their default values, import lines); learned whole first, its
        // secrets are flagged at their real lines and masked in any piece.
        if let Some(path) = input
            .path
            .as_str()
            .and_then(|raw| sandbox::resolve(ctx.target, raw).ok())
            .filter(|path| path.is_file())
        {
            ctx.learn_file(&path);
        }
        Ok(respond(ctx.target, &input, |relative, text| {
            redact_for_model(ctx, relative, text)
        }))
    }
}

/// The tool's answer to `input`, with `redact(relative_path, text)` applied
/// to every string taken from the file, and the result framed as file data.
fn respond(
    target: &Path,
    input: &ParseStructureInput,
    mut redact: impl FnMut(&str, &str) -> String,
) -> ToolOutput {
    let Some(raw) = input.path.as_str() else {
        return ToolOutput::error("Error: parse_structure needs a 'path' string.");
    };
    match outline_file(target, raw) {
        Ok((relative, mut structure)) => {
            structure.map_source_text(|text| redact(&relative, text));
            ToolOutput::ok(frame_for_model(&relative, structure.to_json()))
        }
        Err(err) => ToolOutput::error(err.to_string()),
    }
}

/// Pass one string taken from the file through the redaction filter. The
/// file was learned whole first, so only a secret that learning missed (one
/// past what it reads) becomes a flag here.
fn redact_for_model(ctx: &ToolContext<'_>, relative: &str, text: &str) -> String {
    ctx.redact_new(relative, text)
}

/// Mark the output as data taken from the file, not instructions.
fn frame_for_model(relative: &str, body: String) -> String {
    crate::ai::tools::frame_untrusted(relative, &body)
}

/// Why a file could not be outlined. The text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StructureError {
    #[error("{0}")]
    Sandbox(#[from] SandboxError),
    #[error(
        "Error: '{0}' is a directory; parse_structure outlines one source file (list_directory shows a directory)."
    )]
    Directory(String),
    #[error(
        "Error: '{path}' is a {kind}, not a regular file; parse_structure only reads regular files."
    )]
    NotRegular { path: String, kind: &'static str },
    #[error("Error: parse_structure has no grammar for {}. Supported extensions: {}.", describe_extension(.extension), SUPPORTED_EXTENSIONS.join(", "))]
    Unsupported { extension: String },
    #[error("Error: '{path}' is {} bytes; parse_structure only outlines files up to {} bytes (2 MiB), since larger ones are almost always generated. Use read_file to look at part of it.", .size, MAX_FILE_BYTES)]
    TooLarge { path: String, size: u64 },
    #[error("Error: could not read '{path}': {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("Error: could not outline '{path}': {source}. Use read_file instead.")]
    Parse { path: String, source: ParseError },
}

fn describe_extension(extension: &str) -> String {
    if extension.is_empty() {
        "files without an extension".to_string()
    } else {
        format!("'{extension}' files")
    }
}

/// Resolve `raw` inside `target`, read it and outline it. Returns the path
/// relative to the target (for labels) with the outline.
pub(crate) fn outline_file(
    target: &Path,
    raw: &str,
) -> Result<(String, Structure), StructureError> {
    let path = sandbox::resolve(target, raw)?;
    let relative = sandbox::relative_display(target, &path);
    let metadata = std::fs::metadata(&path).map_err(|source| StructureError::Read {
        path: relative.clone(),
        source,
    })?;
    check_regular_file(&relative, &metadata)?;
    let language = language_for(&path)?;
    let source = read_limited(&path, &relative)?;
    let structure = parse_source(language, &source).map_err(|source| StructureError::Parse {
        path: relative.clone(),
        source,
    })?;
    Ok((relative, structure))
}

fn check_regular_file(relative: &str, metadata: &Metadata) -> Result<(), StructureError> {
    let file_type = metadata.file_type();
    if file_type.is_file() {
        return Ok(());
    }
    if file_type.is_dir() {
        return Err(StructureError::Directory(relative.to_string()));
    }
    let kind = if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_block_device() || file_type.is_char_device() {
        "device"
    } else {
        "special file"
    };
    Err(StructureError::NotRegular {
        path: relative.to_string(),
        kind,
    })
}

/// The language for the file's extension (case-insensitive). The extension
/// is the resolved file's, so a symlink named `x.py` to `notes.txt` is text.
fn language_for(path: &Path) -> Result<Language, StructureError> {
    let extension = path
        .extension()
        .map(|ext| format!(".{}", ext.to_string_lossy().to_lowercase()))
        .unwrap_or_default();
    Language::from_extension(&extension).ok_or(StructureError::Unsupported { extension })
}

/// Read the whole file, refusing it past [`MAX_FILE_BYTES`]. The limit is
/// checked on the open handle and enforced while reading, so a file that
/// grows or is swapped after the first check cannot get past it.
fn read_limited(path: &Path, relative: &str) -> Result<Vec<u8>, StructureError> {
    let read_error = |source| StructureError::Read {
        path: relative.to_string(),
        source,
    };
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .map_err(read_error)?;
    let metadata = file.metadata().map_err(read_error)?;
    check_regular_file(relative, &metadata)?;
    let too_large = |size| StructureError::TooLarge {
        path: relative.to_string(),
        size,
    };
    if metadata.len() > MAX_FILE_BYTES {
        return Err(too_large(metadata.len()));
    }
    let mut source = Vec::with_capacity(metadata.len() as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut source)
        .map_err(read_error)?;
    if source.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(source.len() as u64));
    }
    Ok(source)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;
    use std::sync::mpsc;
    use std::time::Duration;

    use serde_json::{Value, json};

    use super::*;

    /// The tool's answer to the JSON `input`, read as the registry reads
    /// it (anything but an object is no arguments).
    fn respond(
        target: &Path,
        input: &Value,
        redact: impl FnMut(&str, &str) -> String,
    ) -> ToolOutput {
        let input = match input {
            Value::Object(_) => ParseStructureInput::deserialize(input).unwrap(),
            _ => ParseStructureInput::default(),
        };
        super::respond(target, &input, redact)
    }

    /// A target with a few sources, plus a sibling directory outside it.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let (dir, target) = crate::testing::temp_target(&[
            ("src/main.py", "import os\n\ndef main(argv):\n    pass\n"),
            ("Lib.RS", "use std::io;\nfn f() {}\n"),
            ("notes.txt", "hello\n"),
            ("Makefile", "all:\n"),
        ]);
        std::fs::create_dir(target.join("src/pkg.py")).unwrap();
        std::fs::write(dir.path().join("secret.py"), "def leaked(): pass\n").unwrap();
        symlink(dir.path().join("secret.py"), target.join("link-out.py")).unwrap();
        symlink(target.join("src/main.py"), target.join("link-in.py")).unwrap();
        (dir, target)
    }

    /// Run the tool without redaction; a successful outline comes back with
    /// its frame removed so the JSON inside can be checked.
    fn call(target: &Path, path: &str) -> ToolOutput {
        let mut out = respond(target, &json!({ "path": path }), |_, text| text.to_owned());
        if !out.is_error {
            out.content = unframe(&out.content);
        }
        out
    }

    /// The error `call` answers for `path` (it must be one).
    #[track_caller]
    fn refusal_of(target: &Path, path: &str) -> String {
        let out = call(target, path);
        assert!(out.is_error, "{path}: {}", out.content);
        out.content
    }

    fn unframe(framed: &str) -> String {
        let open = framed.find('\n').expect("an opening frame line");
        let close = framed.rfind('\n').expect("a closing frame line");
        assert!(framed.starts_with("<untrusted-data source="), "{framed}");
        assert!(
            framed[close..].starts_with("\n</untrusted-data>"),
            "{framed}"
        );
        framed[open + 1..close].to_string()
    }

    #[test]
    fn schema_and_metadata_are_the_original_interface() {
        let tool = ParseStructure;
        assert_eq!(tool.spec().name, "parse_structure");
        assert_eq!(tool.spec().toolboxes, crate::ai::tools::READERS);
        assert!(!tool.ends_loop());
        let schema = tool.spec().input_schema();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["path"]));
        assert_eq!(schema["properties"]["path"]["type"], "string");
        assert!(schema["properties"]["path"]["description"].is_string());
        assert_eq!(schema.as_object().unwrap().len(), 3);
        assert_eq!(schema["properties"].as_object().unwrap().len(), 1);
        for ext in SUPPORTED_EXTENSIONS {
            assert!(tool.spec().description.contains(ext), "{ext} not described");
        }
    }

    #[test]
    fn outlines_relative_absolute_and_symlinked_paths_inside() {
        let (_d, t) = tree();
        let absolute = t.join("src/main.py");
        for path in [
            "src/main.py",
            absolute.to_str().unwrap(),
            "link-in.py",
            "./src/../src/main.py",
        ] {
            let out = call(&t, path);
            assert!(!out.is_error, "{path}: {}", out.content);
            let value: Value = serde_json::from_str(&out.content).unwrap();
            assert_eq!(value["language"], "python");
            assert_eq!(value["functions"], json!(["main(argv)"]));
            assert_eq!(value["imports"], json!(["import os"]));
        }
        // Extensions are case-insensitive.
        let out = call(&t, "Lib.RS");
        assert!(
            out.content.contains("\"language\":\"rust\""),
            "{}",
            out.content
        );
    }

    #[test]
    fn unsupported_extensions_name_the_supported_ones() {
        let (_d, t) = tree();
        let out = call(&t, "notes.txt");
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "Error: parse_structure has no grammar for '.txt' files. Supported extensions: \
             .go, .js, .jsx, .mjs, .py, .rs, .ts, .tsx."
        );
        let out = call(&t, "Makefile");
        assert_eq!(
            out.content,
            "Error: parse_structure has no grammar for files without an extension. \
             Supported extensions: .go, .js, .jsx, .mjs, .py, .rs, .ts, .tsx."
        );
    }

    #[test]
    fn paths_outside_the_target_are_refused() {
        let (d, t) = tree();
        let outside = d.path().join("secret.py");
        for path in [
            "../secret.py",
            outside.to_str().unwrap(),
            "link-out.py",
            "/etc/passwd",
            "..",
        ] {
            let err = refusal_of(&t, path);
            assert!(
                err.contains("is outside the target directory"),
                "{path}: {err}"
            );
            assert!(!err.contains("leaked"), "{path}");
        }
    }

    #[test]
    fn missing_paths_and_bad_input_are_errors() {
        let (_d, t) = tree();
        assert_eq!(
            refusal_of(&t, "src/nope.py"),
            "Error: path 'src/nope.py' does not exist."
        );
        for input in [json!({}), json!({ "path": 7 }), json!("src/main.py")] {
            let out = respond(&t, &input, |_, text| text.to_owned());
            assert!(out.is_error);
            assert_eq!(out.content, "Error: parse_structure needs a 'path' string.");
        }
    }

    #[test]
    fn directories_are_refused_even_with_a_source_extension() {
        let (_d, t) = tree();
        for path in ["src", "src/pkg.py", "."] {
            let err = refusal_of(&t, path);
            assert!(err.contains("is a directory"), "{path}: {err}");
        }
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let (_d, t) = tree();
        let fifo = t.join("pipe.py");
        crate::testing::mkfifo(&fifo);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || tx.send(call(&t, "pipe.py")).unwrap());
        let out = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("parse_structure blocked on a FIFO");
        assert!(out.is_error);
        assert_eq!(
            out.content,
            "Error: 'pipe.py' is a FIFO, not a regular file; parse_structure only reads regular files."
        );
    }

    #[test]
    fn files_over_the_size_limit_are_refused() {
        let (_d, t) = tree();
        let big = File::create(t.join("generated.js")).unwrap();
        big.set_len(MAX_FILE_BYTES + 1).unwrap();
        let err = refusal_of(&t, "generated.js");
        assert!(
            err.starts_with("Error: 'generated.js' is 2097153 bytes; parse_structure only outlines files up to 2097152 bytes"),
            "{err}"
        );
    }

    #[test]
    fn every_string_from_the_file_goes_through_redaction() {
        let (_d, t) = tree();
        std::fs::write(
            t.join("src/keys.py"),
            "import os\nclass Vault:\n    def open(self, key='sk-live-123'): pass\n",
        )
        .unwrap();
        let mut seen_paths = Vec::new();
        let out = respond(&t, &json!({ "path": "src/keys.py" }), |relative, text| {
            seen_paths.push(relative.to_string());
            text.replace("sk-live-123", "[REDACTED:test]")
        });
        assert!(!out.is_error);
        assert!(!out.content.contains("sk-live-123"), "{}", out.content);
        assert!(out.content.contains("open(self, key='[REDACTED:test]')"));
        // The signature (once as a function, once as a method), the import
        // and the class name.
        assert_eq!(seen_paths.len(), 4);
        assert!(seen_paths.iter().all(|p| p == "src/keys.py"));
    }
}
