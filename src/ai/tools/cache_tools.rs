//! `write_cache`, `read_cache` and `list_cache`: the agent's access to the
//! investigation cache.
//!
//! The dir loop writes summaries with `write_cache` (validated by
//! [`Cache::write_entry`]); synthesis reads them back with `read_cache` and
//! `list_cache`. What comes back from the cache is the agent's words about
//! the target's files, and paths from the target: it passes through the
//! redactor once more (an entry may have been written by a run with
//! redaction off) and is framed as untrusted data, as the synthesis prompt
//! frames the same summaries.
//!
//! `write_cache` keys an entry by the real file it describes
//! ([`entry_location`]): the `path` argument must name an existing file or
//! directory inside the target, symlinks resolved. A relative path is read
//! from the target root, as every tool reads it; one that names nothing
//! there is read from the loop's own directory too, because a model looking
//! at a listing of bare names easily writes `engine.rs` for
//! `src/core/engine.rs`. A name that exists at both places is refused as
//! ambiguous rather than guessed. The cache then records that location in
//! the entry, so the agent's own `path` and `relative_path` fields can never
//! file an entry under the wrong directory.
//!
//! [`Cache::write_entry`]: crate::cache::Cache::write_entry

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::input::Text;
use super::sandbox::{self, SandboxError};
use super::schema::{JsonType, Schema, object, one_of, text, typed};
use super::{
    FatalToolError, Tool, ToolContext, ToolOutput, ToolSpec, Toolbox, frame_untrusted, respond,
};
use crate::cache::EntryKind;
use crate::paths::normalize_lexically;
use crate::text::escape_line;

/// The `cache_type` argument: the kind it names, `None` when it names none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CacheType(Option<EntryKind>);

impl<'de> Deserialize<'de> for CacheType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(CacheType(
            Text::deserialize(d)?.as_str().and_then(EntryKind::parse),
        ))
    }
}

impl CacheType {
    /// The kind, or the error result.
    fn kind(self) -> Result<EntryKind, ToolOutput> {
        self.0
            .ok_or_else(|| ToolOutput::error("Error: cache_type must be 'file' or 'dir'."))
    }
}

/// The `cache_type` property, shared by the three schemas.
fn cache_type_schema(description: Option<&'static str>) -> Schema {
    one_of(&["file", "dir"], description)
}

/// `write_cache`'s input: what kind of entry, for which path, and the entry.
fn write_cache_schema() -> Schema {
    object(
        [
            (
                "cache_type",
                cache_type_schema(Some("A file's summary, or a directory's.")),
            ),
            (
                "path",
                text("Absolute, or relative to the target (else to your directory)."),
            ),
            (
                "data",
                typed(JsonType::Object, "The entry (see the system prompt)."),
            ),
        ],
        &["cache_type", "path", "data"],
    )
}

/// `write_cache(cache_type, path, data)`.
pub(crate) struct WriteCache;

/// `write_cache`'s input.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WriteCacheInput {
    cache_type: CacheType,
    path: Text,
    /// The entry as the agent wrote it: JSON, which the cache validates
    /// and writes.
    data: EntryData,
}

/// `data` as given (`null` included); an empty object when absent.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
struct EntryData(Value);

impl Default for EntryData {
    fn default() -> Self {
        EntryData(Value::Object(Map::new()))
    }
}

impl Tool for WriteCache {
    type Input = WriteCacheInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "write_cache",
            description: "Save the summary (never raw contents) of a file, or of a directory \
                          of your assignment.",
            toolboxes: &[Toolbox::Dir],
            schema: write_cache_schema,
        }
    }

    fn run(
        &self,
        ctx: &ToolContext<'_>,
        input: WriteCacheInput,
    ) -> Result<ToolOutput, FatalToolError> {
        respond(|| {
            let kind = input.cache_type.kind()?;
            let path = input.path.required("path")?;
            // Keys are absolute paths of real files inside the target: an
            // entry for anything else would be clutter no loop reads back,
            // or would land in another directory's summaries.
            let location = entry_location(ctx.target, ctx.home, path).map_err(ToolOutput::error)?;
            check_kind(ctx, kind, path, &location).map_err(ToolOutput::error)?;
            let EntryData(mut data) = input.data;
            if kind == EntryKind::Dir
                && let Some((_, stamp)) = ctx.stamps.iter().find(|(dir, _)| *dir == location)
                && let (Value::Object(entry), Ok(Value::Object(fields))) =
                    (&mut data, serde_json::to_value(stamp))
            {
                entry.extend(fields);
            }
            ctx.cache
                .write_entry(kind, &location.to_string_lossy(), &data)
                .map_err(|err| ToolOutput::error(err.to_string()))?;
            Ok(ToolOutput::ok("ok"))
        })
    }
}

/// The real path a `write_cache` entry for `raw` describes: `raw` resolved
/// (symlinks included) inside `target`, where a relative `raw` is read from
/// the target and, when `home` (the loop's directory) is another directory,
/// from `home` as well. Exactly one of those must exist. `Err` is the
/// message for the agent.
pub(crate) fn entry_location(
    target: &Path,
    home: Option<&Path>,
    raw: &str,
) -> Result<PathBuf, String> {
    let shown = escape_line(raw).into_owned();
    if raw.is_empty() || raw.contains('\0') {
        return Err(SandboxError::Invalid { shown }.to_string());
    }
    if Path::new(raw).is_absolute() {
        return sandbox::resolve(target, raw).map_err(|err| err.to_string());
    }
    let home = home.filter(|home| *home != target);
    let mut found: Vec<PathBuf> = Vec::new();
    let mut outside = false;
    for base in std::iter::once(target).chain(home) {
        let joined = base.join(raw);
        match std::fs::canonicalize(&joined) {
            Ok(real) if sandbox::is_within(target, &real) => {
                if !found.contains(&real) {
                    found.push(real);
                }
            }
            Ok(_) => outside = true,
            Err(_) => outside |= !sandbox::is_within(target, &normalize_lexically(&joined)),
        }
    }
    let shown_at = |path: &Path| escape_line(&sandbox::relative_display(target, path)).into_owned();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] if outside => Err(SandboxError::Outside { shown }.to_string()),
        [] => Err(match home {
            Some(home) => format!(
                "Error: path '{shown}' does not exist, neither from the target root nor from {}/.",
                shown_at(home)
            ),
            None => SandboxError::Missing { shown }.to_string(),
        }),
        [first, second, ..] => Err(format!(
            "Error: path '{shown}' is ambiguous: it names both '{}' (from the target root) and \
             '{}' (from the directory you are investigating). Give the path relative to the \
             target root.",
            shown_at(first),
            shown_at(second)
        )),
    }
}

/// A `file` entry describes a file and a `dir` entry a directory; in a dir
/// loop, the only directories whose entries it writes are its own and those
/// folded into its unit (another directory's summary belongs to that
/// directory's loop).
fn check_kind(
    ctx: &ToolContext<'_>,
    kind: EntryKind,
    raw: &str,
    location: &Path,
) -> Result<(), String> {
    let shown = escape_line(raw);
    let is_dir = location.is_dir();
    match kind {
        EntryKind::File if is_dir => Err(format!(
            "Error: '{shown}' is a directory; cache_type 'file' is for files."
        )),
        EntryKind::Dir if !is_dir => Err(format!(
            "Error: '{shown}' is not a directory; cache_type 'dir' is for directories."
        )),
        EntryKind::Dir => match ctx.home {
            Some(home) if home != location && !ctx.unit.iter().any(|dir| dir == location) => {
                let shown_dir = |dir: &Path| {
                    format!(
                        "{}/",
                        escape_line(&sandbox::relative_display(ctx.target, dir))
                    )
                };
                Err(if ctx.unit.is_empty() {
                    format!(
                        "Error: '{shown}' is not the directory you are investigating; write the \
                         dir entry of {} only.",
                        shown_dir(home)
                    )
                } else {
                    format!(
                        "Error: '{shown}' is not one of the directories you are investigating; \
                         write the dir entries of {} only.",
                        std::iter::once(home)
                            .chain(ctx.unit.iter().map(PathBuf::as_path))
                            .map(shown_dir)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                })
            }
            _ => Ok(()),
        },
        EntryKind::File => Ok(()),
    }
}

/// `read_cache(cache_type, path)`.
pub(crate) struct ReadCache;

/// `read_cache`'s input.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ReadCacheInput {
    cache_type: CacheType,
    path: Text,
}

impl Tool for ReadCache {
    type Input = ReadCacheInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "read_cache",
            description: "The cached summary of a file or directory, as JSON; null when \
                          there is none.",
            toolboxes: &[Toolbox::Ask, Toolbox::Refine],
            schema: || {
                object(
                    [
                        ("cache_type", cache_type_schema(None)),
                        ("path", text("The file or directory.")),
                    ],
                    &["cache_type", "path"],
                )
            },
        }
    }

    fn run(
        &self,
        ctx: &ToolContext<'_>,
        input: ReadCacheInput,
    ) -> Result<ToolOutput, FatalToolError> {
        respond(|| {
            let kind = input.cache_type.kind()?;
            let path = input.path.required("path")?;
            let Some(entry) = ctx.cache.read_entry(kind, path) else {
                return Ok(ToolOutput::ok("null"));
            };
            let text = serde_json::to_string(&entry).unwrap_or_default();
            Ok(ToolOutput::ok(frame_untrusted(
                &format!("cached {} entry: {path}", kind.as_str()),
                &ctx.redact_unflagged(&text),
            )))
        })
    }
}

/// `list_cache(cache_type)`.
pub(crate) struct ListCache;

/// `list_cache`'s input.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ListCacheInput {
    cache_type: CacheType,
}

impl Tool for ListCache {
    type Input = ListCacheInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "list_cache",
            description: "The paths that have a cached summary of this type, one a line.",
            toolboxes: &[Toolbox::Refine],
            schema: || object([("cache_type", cache_type_schema(None))], &["cache_type"]),
        }
    }

    fn run(
        &self,
        ctx: &ToolContext<'_>,
        input: ListCacheInput,
    ) -> Result<ToolOutput, FatalToolError> {
        respond(|| {
            let kind = input.cache_type.kind()?;
            let paths = ctx.cache.list_entries(kind);
            if paths.is_empty() {
                return Ok(ToolOutput::ok("(no cached entries)"));
            }
            let lines: Vec<String> = paths
                .iter()
                .map(|path| escape_line(path).into_owned())
                .collect();
            Ok(ToolOutput::ok(frame_untrusted(
                &format!("cached {} entries", kind.as_str()),
                &ctx.redact_unflagged(&lines.join("\n")),
            )))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// target/{README.md, top.rs, src/{README.md, core/engine.rs}}, and a
    /// file outside.
    fn tree() -> (tempfile::TempDir, PathBuf) {
        let files = ["README.md", "top.rs", "src/README.md", "src/core/engine.rs"];
        let (tmp, t) = crate::testing::temp_target(&files.map(|file| (file, "x")));
        std::fs::write(tmp.path().join("outside.rs"), "x").unwrap();
        symlink(tmp.path().join("outside.rs"), t.join("src/core/out.rs")).unwrap();
        symlink("engine.rs", t.join("src/core/alias.rs")).unwrap();
        (tmp, t)
    }

    #[test]
    fn relative_paths_resolve_from_the_root_then_the_loops_directory() {
        let (_tmp, t) = tree();
        let core = t.join("src/core");
        let engine = core.join("engine.rs");
        let at = |home: Option<&Path>, raw: &str| entry_location(&t, home, raw);
        // Every spelling of the engine from its own loop is the engine.
        for raw in [
            "engine.rs",
            "./engine.rs",
            "src/core/engine.rs",
            "./src/core/engine.rs",
            "src/../src/core/engine.rs",
            "alias.rs",
            engine.to_str().unwrap(),
        ] {
            assert_eq!(at(Some(&core), raw), Ok(engine.clone()), "{raw}");
        }
        // From the parent's loop, a path relative to it works too.
        assert_eq!(
            at(Some(&t.join("src")), "core/engine.rs"),
            Ok(engine.clone())
        );
        // A name only the root has is the root's, from any loop.
        assert_eq!(at(Some(&core), "top.rs"), Ok(t.join("top.rs")));
        // Outside the dir loops there is no second place to look.
        assert!(
            at(None, "engine.rs")
                .unwrap_err()
                .contains("does not exist")
        );
        // At the root, the root is the one place.
        assert_eq!(at(Some(&t), "README.md"), Ok(t.join("README.md")));
    }

    #[test]
    fn ambiguous_missing_and_outside_paths_are_refused() {
        let (_tmp, t) = tree();
        let src = t.join("src");
        let err = entry_location(&t, Some(&src), "README.md").unwrap_err();
        assert!(err.contains("ambiguous"), "{err}");
        assert!(
            err.contains("'README.md'") && err.contains("'src/README.md'"),
            "{err}"
        );
        let err = entry_location(&t, Some(&src), ".").unwrap_err();
        assert!(err.contains("ambiguous"), "{err}");
        let err = entry_location(&t, Some(&src.join("core")), "missing.rs").unwrap_err();
        assert_eq!(
            err,
            "Error: path 'missing.rs' does not exist, neither from the target root nor from src/core/."
        );
        for raw in ["../outside.rs", "src/core/out.rs", "/etc/passwd"] {
            let err = entry_location(&t, Some(&src), raw).unwrap_err();
            assert!(err.contains("outside the target"), "{raw}: {err}");
        }
        for raw in ["", "a\0b"] {
            assert!(
                entry_location(&t, None, raw)
                    .unwrap_err()
                    .contains("not a valid path")
            );
        }
    }
}
