//! `read_file` and `list_directory`: the agent's eyes on the target.
//!
//! Both resolve the path through [`sandbox::resolve`] first, so nothing
//! outside the target (after following symlinks) is ever opened or listed.
//! Neither opens anything but regular files and directories: FIFOs, sockets
//! and devices are recognised from their metadata, and files are opened with
//! `O_NONBLOCK` in case one was swapped in after the check, so no tool call
//! can hang the run.
//!
//! [`listing_lines`] is the one formatter of directory entries, shared with
//! the dir loop's prompt, which lists the directory the same way. Names come
//! from the target, so a listing reaches the model like file text does:
//! escaped to one line per entry, redacted, and framed as untrusted data.

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::input::{Switch, Text};
use super::schema::{JsonType, object, text, typed};
use super::sniff::SNIFF_BYTES;
use super::{
    FatalToolError, Tool, ToolContext, ToolOutput, ToolSpec, binary, frame_untrusted, respond,
    sandbox, sniff,
};
use crate::scan::ScanFilter;
use crate::text::escape_line;

/// `read_file`'s default `max_bytes`.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 4096;
/// The most `read_file` returns in one call, whatever `max_bytes` says.
pub(crate) const MAX_BYTES_CAP: u64 = 1024 * 1024;

/// `read_file(path, max_bytes = 4096)`.
pub(crate) struct ReadFile;

/// `read_file`'s input.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ReadFileInput {
    path: Text,
    max_bytes: MaxBytes,
    hex: Switch,
}

impl Tool for ReadFile {
    type Input = ReadFileInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read_file",
            description: "A file's text from its start (a note says when max_bytes cut it); of a \
                          binary file, its type and size, or with hex a hex dump.",
            toolboxes: super::READERS,
            schema: || {
                object(
                    [
                        ("path", text("The file.")),
                        (
                            "max_bytes",
                            typed(JsonType::Integer, "Default 4096, at most 1048576."),
                        ),
                        (
                            "hex",
                            typed(
                                JsonType::Boolean,
                                "A binary file's first max_bytes (at most 16384) as hex.",
                            ),
                        ),
                    ],
                    &["path"],
                )
            },
        }
    }

    fn run(
        &self,
        ctx: &ToolContext<'_>,
        input: ReadFileInput,
    ) -> Result<ToolOutput, FatalToolError> {
        respond(|| {
            let raw = input.path.required("path")?;
            let max_bytes = input.max_bytes.bytes()?;
            let path = resolve(ctx, raw)?;
            let hex = input.hex.value("hex")?;
            let rel = sandbox::relative_display(ctx.target, &path);
            let prefix = read_prefix(
                &path,
                (max_bytes + REDACTION_LOOKAHEAD).max(SNIFF_BYTES as u64),
            )
            .map_err(|why| ToolOutput::error(why.message(raw)))?;
            if binary::is_binary(&prefix.bytes) {
                return Ok(ToolOutput::ok(if hex {
                    binary::hex_view(ctx, &rel, &prefix.bytes, prefix.size, max_bytes)
                } else {
                    binary::describe(&rel, &prefix.bytes, prefix.size)
                }));
            }
            Ok(ToolOutput::ok(render_file(ctx, &rel, &prefix, max_bytes)))
        })
    }
}

/// `max_bytes`: a positive whole number (given as an integer, an integral
/// float or a numeric string), capped at [`MAX_BYTES_CAP`]; `None` when
/// it is not one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MaxBytes(Option<u64>);

impl Default for MaxBytes {
    fn default() -> Self {
        MaxBytes(Some(DEFAULT_MAX_BYTES))
    }
}

impl<'de> Deserialize<'de> for MaxBytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let parsed = match Value::deserialize(d)? {
            Value::Null => Some(DEFAULT_MAX_BYTES),
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite() && *f >= 1.0 && f.fract() == 0.0)
                    .map(|f| f.min(MAX_BYTES_CAP as f64) as u64)
            }),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        Ok(MaxBytes(
            parsed.filter(|n| *n >= 1).map(|n| n.min(MAX_BYTES_CAP)),
        ))
    }
}

impl MaxBytes {
    /// The number of bytes, or the error result.
    fn bytes(self) -> Result<u64, ToolOutput> {
        self.0.ok_or_else(|| {
            ToolOutput::error("Error: max_bytes must be a positive whole number of bytes.")
        })
    }
}

/// Resolve a model-supplied path inside the target, or the error result.
fn resolve(ctx: &ToolContext<'_>, raw: &str) -> Result<std::path::PathBuf, ToolOutput> {
    sandbox::resolve(ctx.target, raw).map_err(|err| ToolOutput::error(err.to_string()))
}

/// The start of a regular file.
pub(super) struct Prefix {
    pub(super) bytes: Vec<u8>,
    pub(super) size: u64,
}

/// Why a file was not read.
pub(super) enum NotRead {
    Directory,
    Special(&'static str),
    Io(std::io::Error),
}

impl NotRead {
    fn message(&self, raw: &str) -> String {
        let shown = escape_line(raw);
        match self {
            NotRead::Directory => {
                format!("Error: '{shown}' is a directory; use list_directory to see inside it.")
            }
            NotRead::Special(kind) => {
                format!("Error: '{shown}' is a {kind}, not a regular file; it is not read.")
            }
            NotRead::Io(err) => format!("Error reading file '{shown}': {err}"),
        }
    }
}

/// Read up to `max_bytes` from the start of the regular file at `path`
/// (already resolved, so free of symlinks). The type is checked before
/// opening, and again on the open descriptor.
pub(super) fn read_prefix(path: &Path, max_bytes: u64) -> Result<Prefix, NotRead> {
    let meta = std::fs::symlink_metadata(path).map_err(NotRead::Io)?;
    refuse_non_regular(&meta)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(path)
        .map_err(NotRead::Io)?;
    let meta = file.metadata().map_err(NotRead::Io)?;
    refuse_non_regular(&meta)?;
    let mut bytes = Vec::with_capacity(max_bytes.min(meta.len()) as usize);
    file.take(max_bytes)
        .read_to_end(&mut bytes)
        .map_err(NotRead::Io)?;
    Ok(Prefix {
        bytes,
        size: meta.len(),
    })
}

fn refuse_non_regular(meta: &std::fs::Metadata) -> Result<(), NotRead> {
    let kind = meta.file_type();
    if kind.is_dir() {
        Err(NotRead::Directory)
    } else if kind.is_fifo() {
        Err(NotRead::Special("FIFO (named pipe)"))
    } else if kind.is_socket() {
        Err(NotRead::Special("socket"))
    } else if kind.is_char_device() || kind.is_block_device() {
        Err(NotRead::Special("device"))
    } else if !kind.is_file() {
        Err(NotRead::Special("special file"))
    } else {
        Ok(())
    }
}

/// Bytes read past `max_bytes` so that a secret cut by the limit is still
/// recognised and redacted whole (tokens are far shorter than this).
const REDACTION_LOOKAHEAD: u64 = 1024;

/// The result text: the first `max_bytes` of the file, redacted (judged on
/// the whole window read, so nothing is cut mid-secret), framed, then our
/// truncation note outside the frame so the model can trust it.
fn render_file(ctx: &ToolContext<'_>, rel: &str, prefix: &Prefix, max_bytes: u64) -> String {
    if prefix.bytes.is_empty() {
        return "(empty file)".to_string();
    }
    let window_is_whole_file = prefix.bytes.len() as u64 >= prefix.size;
    let window = if window_is_whole_file {
        &prefix.bytes[..]
    } else {
        without_cut_char(&prefix.bytes)
    };
    let text = String::from_utf8_lossy(window);
    let keep = if window.len() as u64 > max_bytes {
        String::from_utf8_lossy(without_cut_char(&window[..max_bytes as usize])).len()
    } else {
        text.len()
    };
    let (redacted, covered) = ctx.redact_prefix(rel, &text, keep);
    let mut out = frame_untrusted(rel, &redacted);
    if covered < text.len() || !window_is_whole_file {
        // The note counts the file's bytes, not the text's: each invalid
        // byte sequence became a three-byte replacement character.
        let shown = file_bytes_in(window, covered);
        out.push_str(&truncation_note(rel, shown as u64, prefix.size));
    }
    out
}

/// How many bytes of `bytes` the first `text_len` bytes of
/// `String::from_utf8_lossy(bytes)` stand for (each replacement character
/// stands for the invalid sequence it replaced).
fn file_bytes_in(bytes: &[u8], text_len: usize) -> usize {
    let replacement = char::REPLACEMENT_CHARACTER.len_utf8();
    let (mut text, mut file) = (0, 0);
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid().len();
        if text + valid >= text_len {
            return file + (text_len - text);
        }
        text += valid;
        file += valid;
        if chunk.invalid().is_empty() {
            continue;
        }
        if text + replacement > text_len {
            return file;
        }
        text += replacement;
        file += chunk.invalid().len();
    }
    file
}

/// Drop a UTF-8 sequence cut in half by the byte limit, so the text does not
/// end in a replacement character that is not in the file.
fn without_cut_char(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(err) if err.error_len().is_none() => &bytes[..err.valid_up_to()],
        _ => bytes,
    }
}

fn truncation_note(rel: &str, shown: u64, size: u64) -> String {
    format!(
        "\n[Truncated: showed the first {shown} of {size} bytes. To see more, call read_file \
         again with a larger max_bytes (at most {MAX_BYTES_CAP}), or see the end with \
         run_command: tail -n 50 {}]",
        quote_for_command(rel)
    )
}

/// `rel` as one argument of a `run_command` command line.
fn quote_for_command(rel: &str) -> String {
    let plain = rel
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._/-+@%,:".contains(c));
    if plain && !rel.is_empty() {
        escape_line(rel).into_owned()
    } else if !rel.contains('\'') {
        format!("'{}'", escape_line(rel))
    } else {
        let escaped = escape_line(rel).replace('\\', "\\\\").replace('"', "\\\"");
        format!("\"{escaped}\"")
    }
}

/// `list_directory(path, show_hidden = false)`.
pub(crate) struct ListDirectory;

/// `list_directory`'s input.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ListDirectoryInput {
    path: Text,
    show_hidden: Switch,
}

impl Tool for ListDirectory {
    type Input = ListDirectoryInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "list_directory",
            description: "A directory's entries, files with size and sniffed mime type.",
            toolboxes: super::READERS,
            schema: || {
                object(
                    [
                        ("path", text("The directory.")),
                        (
                            "show_hidden",
                            typed(
                                JsonType::Boolean,
                                "Also names starting with a dot (default false).",
                            ),
                        ),
                    ],
                    &["path"],
                )
            },
        }
    }

    fn run(
        &self,
        ctx: &ToolContext<'_>,
        input: ListDirectoryInput,
    ) -> Result<ToolOutput, FatalToolError> {
        respond(|| {
            // The original lists the target when no path is given.
            let raw = input
                .path
                .optional("path")?
                .filter(|p| !p.is_empty())
                .unwrap_or(".");
            let show_hidden = input.show_hidden.value("show_hidden")?;
            let dir = resolve(ctx, raw)?;
            if !dir.is_dir() {
                return Err(ToolOutput::error(format!(
                    "Error: '{}' is not a directory.",
                    escape_line(raw)
                )));
            }
            let listing =
                scoped_listing(ctx.target, &dir, show_hidden, ctx.scope).map_err(|err| {
                    ToolOutput::error(format!(
                        "Error listing directory '{}': {err}",
                        escape_line(raw)
                    ))
                })?;
            if listing.lines.is_empty() && listing.left_out == 0 {
                return Ok(ToolOutput::ok("(empty directory)"));
            }
            let rel = sandbox::relative_display(ctx.target, &dir);
            let listing = ctx.redact_listing(&rel, &listing.text());
            Ok(ToolOutput::ok(frame_untrusted(
                &format!("listing of {rel}"),
                &listing,
            )))
        })
    }
}

/// One line per entry of `dir`, sorted by name:
/// `  name/  (dir)` or `  name  (N bytes)  [mime]`. Hidden names (leading
/// dot) only with `show_hidden`. Symlinks are described by what they point
/// at when that is inside `target`; a link leading out is shown as such and
/// never followed. Names are escaped so each entry stays on one line.
pub fn listing_lines(target: &Path, dir: &Path, show_hidden: bool) -> std::io::Result<Vec<String>> {
    Ok(scoped_listing(target, dir, show_hidden, None)?.lines)
}

/// A directory listing within the run's scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirListing {
    /// As [`listing_lines`] writes them.
    pub lines: Vec<String>,
    /// Entries the scope left out (ignored, or named by `-x`).
    pub left_out: usize,
}

impl DirListing {
    /// The lines, then a note of what the scope left out, if anything.
    pub fn text(&self) -> String {
        let mut text = self.lines.join("\n");
        if self.left_out > 0 {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!(
                "  ({} more {} left out by ignore files or --exclude)",
                self.left_out,
                if self.left_out == 1 {
                    "entry"
                } else {
                    "entries"
                }
            ));
        }
        text
    }
}

/// [`listing_lines`], leaving out the entries `scope` excludes (ignored
/// names and `-x` directories, as the base scan does). Whether hidden names
/// show is up to `show_hidden`, so the agent can still ask for them, but an
/// ignored one (a `.env` listed in `.gitignore`) stays out either way.
pub(crate) fn scoped_listing(
    target: &Path,
    dir: &Path,
    show_hidden: bool,
    scope: Option<&ScanFilter>,
) -> std::io::Result<DirListing> {
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|entry| entry.file_name()))
        .filter(|name| show_hidden || !name.as_bytes().starts_with(b"."))
        .collect();
    let before = names.len();
    if let Some(scope) = scope {
        names.retain(|name| {
            let path = dir.join(name);
            if name.as_bytes().starts_with(b".") {
                !scope.rules_exclude(&path, is_dir(&path))
            } else {
                in_scope(scope, &path)
            }
        });
    }
    let left_out = before - names.len();
    // Byte order, which is code-point order for UTF-8 names (the original's
    // `sorted(os.listdir())`).
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let lines = names
        .iter()
        .map(|name| describe_entry(target, dir, name))
        .collect();
    Ok(DirListing { lines, left_out })
}

/// Whether the scan would keep `path`: a directory (or a link to one, which
/// the listing shows as a directory) as a directory, anything else as a file.
fn in_scope(scope: &ScanFilter, path: &Path) -> bool {
    if is_dir(path) {
        scope.allows_dir(path)
    } else {
        scope.allows_file(path)
    }
}

fn is_dir(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.is_dir())
}

/// The (escaped) name in a line written by [`describe_entry`], without the
/// `/` of a directory; `None` for a line of another shape.
pub(crate) fn entry_name(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("  ")?;
    let name = &rest[..rest.find("  (")?];
    Some(name.strip_suffix('/').unwrap_or(name))
}

/// The listing line of `dir/name`.
pub(crate) fn describe_entry(target: &Path, dir: &Path, name: &OsStr) -> String {
    let shown = escape_line(&name.to_string_lossy()).into_owned();
    let path = dir.join(name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return format!("  {shown}  (stat failed)");
    };
    let (path, meta) = if meta.file_type().is_symlink() {
        let Ok(real) = std::fs::canonicalize(&path) else {
            return format!("  {shown}  (stat failed)");
        };
        if !sandbox::is_within(target, &real) {
            return format!("  {shown}  (symlink to outside the target)");
        }
        match std::fs::metadata(&real) {
            Ok(meta) => (real, meta),
            Err(_) => return format!("  {shown}  (stat failed)"),
        }
    } else {
        (path, meta)
    };
    if meta.is_dir() {
        format!("  {shown}/  (dir)")
    } else {
        format!(
            "  {shown}  ({} bytes)  [{}]",
            meta.len(),
            sniff::mime_of(&path, &meta)
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `max_bytes` as `read_file` reads it from `input`.
    fn max_bytes_arg(input: &Value) -> Result<u64, ToolOutput> {
        ReadFileInput::deserialize(input).unwrap().max_bytes.bytes()
    }

    #[test]
    fn max_bytes_is_parsed_leniently_and_capped() {
        let parse = |v: Value| max_bytes_arg(&json!({ "max_bytes": v }));
        assert_eq!(max_bytes_arg(&json!({})), Ok(DEFAULT_MAX_BYTES));
        assert_eq!(parse(json!(null)), Ok(DEFAULT_MAX_BYTES));
        assert_eq!(parse(json!(10)), Ok(10));
        assert_eq!(parse(json!(10.0)), Ok(10));
        assert_eq!(parse(json!("10")), Ok(10));
        assert_eq!(parse(json!(5_000_000)), Ok(MAX_BYTES_CAP));
        assert_eq!(parse(json!(1e300)), Ok(MAX_BYTES_CAP));
        for bad in [
            json!(0),
            json!(-5),
            json!(2.5),
            json!("lots"),
            json!(true),
            json!([1]),
        ] {
            let err = parse(bad.clone()).unwrap_err();
            assert!(err.is_error && err.content.contains("max_bytes"), "{bad}");
        }
    }

    #[test]
    fn a_cut_character_is_dropped_but_invalid_bytes_are_kept() {
        let text = "aé".as_bytes();
        assert_eq!(without_cut_char(&text[..2]), b"a");
        assert_eq!(without_cut_char(b"a\xffb"), b"a\xffb");
        assert_eq!(without_cut_char(b"plain"), b"plain");
    }

    #[test]
    fn text_offsets_map_back_to_file_bytes() {
        let bytes = b"ab\xff\xfecd\xe9";
        let text = String::from_utf8_lossy(bytes);
        // a b U+FFFD U+FFFD c d U+FFFD: 3 bytes of text per invalid byte.
        assert_eq!(text.len(), 13);
        for (text_len, file_len) in [(0, 0), (2, 2), (4, 2), (5, 3), (8, 4), (9, 5), (10, 6)] {
            assert_eq!(file_bytes_in(bytes, text_len), file_len, "{text_len}");
        }
        assert_eq!(file_bytes_in(bytes, 13), bytes.len());
        assert_eq!(file_bytes_in(b"plain", 3), 3);
    }

    #[test]
    fn entry_names_come_back_out_of_listing_lines() {
        assert_eq!(
            entry_name("  main.rs  (13 bytes)  [text/plain]"),
            Some("main.rs")
        );
        assert_eq!(entry_name("  src/  (dir)"), Some("src"));
        assert_eq!(entry_name("Directory contents:"), None);
    }

    #[test]
    fn the_tail_hint_quotes_awkward_names() {
        assert_eq!(quote_for_command("src/main.rs"), "src/main.rs");
        assert_eq!(quote_for_command("my file.txt"), "'my file.txt'");
        assert!(truncation_note("a.txt", 10, 20).contains("first 10 of 20 bytes"));
        assert_eq!(quote_for_command("it's"), "\"it's\"");
        assert!(truncation_note("a.txt", 10, 20).ends_with("run_command: tail -n 50 a.txt]"));
    }
}
