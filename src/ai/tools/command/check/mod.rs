//! The argument checker: from a command line to the exact argv we will run,
//! or the reason we will not.
//!
//! It reads each word the way the program itself will (GNU getopt rules for
//! everything but find, find's own grammar for find), so it knows which words
//! are options, option values, patterns and paths:
//!
//! - the program must be on the whitelist; it is named by bare name (a path
//!   such as `./grep` only counts for its last component, and the system's
//!   program is what runs);
//! - every option must be known; dangerous ones are refused by name;
//! - every path (operands, find's starting points and reference files,
//!   pattern files) must resolve inside the target with links followed; a
//!   missing path is fine only if it stays inside both lexically and through
//!   its nearest existing ancestor;
//! - files that get *read* may not be FIFOs, sockets or devices, so nothing
//!   can block on them;
//! - unquoted globs in path positions are expanded inside the target (see
//!   [`super::glob`]); everywhere else they are passed on literally.
//!
//! It touches the file system only to look (resolve, stat, list), never to
//! open a file's contents.

use std::path::Path;

use super::argv::{self, Word};
use super::glob::{self, GlobError};
use super::refusal::Refusal;
use super::spec::{self, Digits, Effect, Operands, Opt, Primary, Program, Takes};
use crate::ai::tools::sandbox::{self, SandboxError};

pub(crate) use super::refusal::MAX_COMMAND_BYTES;

/// What a word of the final argv is, as the program will read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgRole {
    /// An option, possibly with its value glued on (`-n5`, `--file=x`).
    Option,
    /// The separate value of the option before it.
    OptionValue,
    /// A search pattern (grep's first operand, or `-e`'s value).
    Pattern,
    /// A path checked to stay inside the target.
    Path,
    /// A word of a find expression.
    Expression,
}

/// One word of the argv to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub text: String,
    pub role: ArgRole,
}

/// A checked command, ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedCommand {
    /// The bare program name, one of [`spec::WHITELIST`].
    pub program: &'static str,
    /// The arguments after the program name.
    pub args: Vec<Arg>,
    /// Things the model should be told alongside the output.
    pub notes: Vec<String>,
}

impl CheckedCommand {
    /// The arguments as the program gets them.
    pub(crate) fn argv(&self) -> Vec<&str> {
        self.args.iter().map(|a| a.text.as_str()).collect()
    }
}

/// Check `line` against the rules, for a run inside `target` (canonical).
pub fn check(target: &Path, line: &str) -> Result<CheckedCommand, Refusal> {
    if line.len() > MAX_COMMAND_BYTES {
        return Err(Refusal::TooLong);
    }
    let words = argv::split(line)?;
    let (first, rest) = words.split_first().ok_or(Refusal::Empty)?;
    let program = program_name(first)?;
    let mut checker = Checker {
        target,
        words: rest,
        next: 0,
        args: Vec::new(),
        notes: Vec::new(),
    };
    if first.text().contains('/') {
        checker.notes.push(format!(
            "'{}' ran as the system's {program}; programs are never run from a path.",
            first.text()
        ));
    }
    match spec::program(program) {
        Some(table) => checker.check_getopt(table)?,
        None => checker.check_find()?,
    }
    Ok(CheckedCommand {
        program,
        args: checker.args,
        notes: checker.notes,
    })
}

/// The whitelisted name the first word stands for.
fn program_name(word: &Word) -> Result<&'static str, Refusal> {
    let text = word.text();
    let base = text.rsplit('/').next().unwrap_or_default();
    spec::WHITELIST
        .iter()
        .find(|name| **name == base && !word.has_unquoted_glob())
        .copied()
        .ok_or(Refusal::NotAllowed {
            name: base.to_string(),
        })
}

/// How a path will be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Its contents get read.
    Read,
    /// Only its metadata (or its directory entries) are looked at.
    Metadata,
}

struct Checker<'a> {
    target: &'a Path,
    words: &'a [Word],
    next: usize,
    args: Vec<Arg>,
    notes: Vec<String>,
}

/// A word of a getopt program before we know whether it is the pattern.
enum Pending {
    Ready(Arg),
    Operand(&'static Program, Word),
}

impl<'a> Checker<'a> {
    fn take(&mut self) -> Option<&'a Word> {
        let word = self.words.get(self.next);
        self.next += 1;
        word
    }

    fn push(&mut self, text: impl Into<String>, role: ArgRole) {
        self.args.push(Arg {
            text: text.into(),
            role,
        });
    }

    /// Programs that parse options with GNU getopt: options may come anywhere
    /// before `--`, clustered (`-rn`), with values glued or separate.
    fn check_getopt(&mut self, program: &'static Program) -> Result<(), Refusal> {
        let mut pending = Vec::new();
        let mut explicit_pattern = false;
        let mut options_done = false;
        while let Some(word) = self.take() {
            let text = word.text();
            if options_done || text == "-" || !text.starts_with('-') {
                pending.push(Pending::Operand(program, word.clone()));
            } else if text == "--" {
                options_done = true;
                pending.push(ready(text, ArgRole::Option));
            } else if let Some(long) = text.strip_prefix("--") {
                let args = self.long_option(program, long, &mut explicit_pattern)?;
                pending.extend(args.into_iter().map(Pending::Ready));
            } else if program.digits == Digits::LineCount
                && text[1..].chars().all(|c| c.is_ascii_digit())
            {
                pending.push(ready(text, ArgRole::Option));
            } else {
                let args = self.short_cluster(program, &text, &mut explicit_pattern)?;
                pending.extend(args.into_iter().map(Pending::Ready));
            }
        }
        let mut pattern_needed = program.operands == Operands::PatternThenRead && !explicit_pattern;
        for item in pending {
            match item {
                Pending::Ready(arg) => self.args.push(arg),
                Pending::Operand(_, word) if pattern_needed => {
                    pattern_needed = false;
                    self.push(word.text(), ArgRole::Pattern);
                }
                Pending::Operand(program, word) => {
                    let access = match program.operands {
                        Operands::Read | Operands::PatternThenRead => Access::Read,
                        Operands::Metadata => Access::Metadata,
                    };
                    self.path_operand(&word, access)?;
                }
            }
        }
        Ok(())
    }

    fn long_option(
        &mut self,
        program: &'static Program,
        long: &str,
        explicit_pattern: &mut bool,
    ) -> Result<Vec<Arg>, Refusal> {
        let (name, glued) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (long, None),
        };
        let shown = format!("--{name}");
        let opt = program.long(name).ok_or_else(|| Refusal::UnknownOption {
            program: program.name,
            option: shown.clone(),
            hint: program.expansion_of(name).map(str::to_string),
        })?;
        let whole = format!("--{long}");
        match (opt.takes, glued) {
            (Takes::Nothing, Some(_)) => Err(Refusal::UnexpectedValue { option: shown }),
            (Takes::Nothing, None) => {
                self.apply(program, opt, &shown, None, explicit_pattern)?;
                Ok(vec![arg(whole, ArgRole::Option)])
            }
            (Takes::OptionalValue, value) | (Takes::Value, value @ Some(_)) => {
                self.apply(program, opt, &shown, value, explicit_pattern)?;
                Ok(vec![arg(whole, ArgRole::Option)])
            }
            (Takes::Value, None) => {
                self.separate_value(program, opt, whole, &shown, explicit_pattern)
            }
        }
    }

    fn short_cluster(
        &mut self,
        program: &'static Program,
        text: &str,
        explicit_pattern: &mut bool,
    ) -> Result<Vec<Arg>, Refusal> {
        for (at, c) in text.char_indices().skip(1) {
            if program.digits == Digits::Context && c.is_ascii_digit() {
                continue;
            }
            let shown = format!("-{c}");
            let opt = program.short(c).ok_or_else(|| Refusal::UnknownOption {
                program: program.name,
                option: shown.clone(),
                hint: None,
            })?;
            let rest = &text[at + c.len_utf8()..];
            match opt.takes {
                Takes::Nothing => {
                    self.apply(program, opt, &shown, None, explicit_pattern)?;
                }
                Takes::Value | Takes::OptionalValue if !rest.is_empty() => {
                    self.apply(program, opt, &shown, Some(rest), explicit_pattern)?;
                    break;
                }
                Takes::OptionalValue => {
                    self.apply(program, opt, &shown, None, explicit_pattern)?;
                }
                Takes::Value => {
                    return self.separate_value(
                        program,
                        opt,
                        text.to_string(),
                        &shown,
                        explicit_pattern,
                    );
                }
            }
        }
        Ok(vec![arg(text, ArgRole::Option)])
    }

    /// An option whose value is the next word.
    fn separate_value(
        &mut self,
        program: &'static Program,
        opt: &Opt,
        option_word: String,
        shown: &str,
        explicit_pattern: &mut bool,
    ) -> Result<Vec<Arg>, Refusal> {
        let value = self
            .take()
            .map(Word::text)
            .ok_or_else(|| Refusal::MissingValue {
                option: shown.to_string(),
            })?;
        let role = self.apply(program, opt, shown, Some(&value), explicit_pattern)?;
        Ok(vec![arg(option_word, ArgRole::Option), arg(value, role)])
    }

    /// Enforce an option's effect; returns the role of its value.
    fn apply(
        &mut self,
        program: &'static Program,
        opt: &Opt,
        shown: &str,
        value: Option<&str>,
        explicit_pattern: &mut bool,
    ) -> Result<ArgRole, Refusal> {
        match opt.effect {
            Effect::Harmless => Ok(ArgRole::OptionValue),
            Effect::Refused(why) => Err(Refusal::RefusedOption {
                program: program.name,
                option: shown.to_string(),
                why,
            }),
            Effect::Pattern => {
                *explicit_pattern = true;
                Ok(ArgRole::Pattern)
            }
            Effect::PatternFile | Effect::ExcludeFile => {
                if opt.effect == Effect::PatternFile {
                    *explicit_pattern = true;
                }
                self.pattern_file(shown, value.unwrap_or_default())?;
                Ok(ArgRole::Path)
            }
            Effect::DevicesAction => match value {
                Some("skip") => Ok(ArgRole::OptionValue),
                other => Err(Refusal::BadValue {
                    option: shown.to_string(),
                    value: other.unwrap_or_default().to_string(),
                    allowed: "'skip' (reading devices and FIFOs can block)",
                }),
            },
        }
    }

    /// A file of patterns must be a regular file inside the target.
    fn pattern_file(&self, option: &str, raw: &str) -> Result<(), Refusal> {
        let real = sandbox::resolve(self.target, raw).map_err(|err| match err {
            SandboxError::Outside { .. } => Refusal::Path(err),
            SandboxError::Missing { .. } | SandboxError::Invalid { .. } => {
                Refusal::NotRegularFile {
                    option: option.to_string(),
                    shown: raw.to_string(),
                }
            }
        })?;
        if real.metadata().is_ok_and(|m| m.is_file()) {
            Ok(())
        } else {
            Err(Refusal::NotRegularFile {
                option: option.to_string(),
                shown: raw.to_string(),
            })
        }
    }

    /// A path operand: expanded if it holds an unquoted glob, then checked.
    fn path_operand(&mut self, word: &Word, access: Access) -> Result<(), Refusal> {
        let text = word.text();
        if text == "-" {
            return Err(Refusal::Stdin);
        }
        if !word.has_unquoted_glob() {
            check_path(self.target, &text, access)?;
            self.push(text, ArgRole::Path);
            return Ok(());
        }
        let matches = glob::expand(self.target, word).map_err(|err| match err {
            GlobError::Outside(err) => Refusal::Path(err),
            GlobError::TooBroad => Refusal::GlobTooBroad {
                pattern: text.clone(),
            },
        })?;
        if matches.is_empty() {
            return Err(Refusal::NoGlobMatch { pattern: text });
        }
        let mut kept = 0;
        let mut skipped = Vec::new();
        let mut first_refusal = None;
        for found in matches {
            match check_path(self.target, &found, access) {
                Ok(()) => {
                    kept += 1;
                    self.push(found, ArgRole::Path);
                }
                Err(refusal) => {
                    first_refusal.get_or_insert(refusal);
                    skipped.push(found);
                }
            }
        }
        match first_refusal {
            None => Ok(()),
            Some(first) if kept == 0 => Err(Refusal::GlobAllSkipped {
                pattern: text,
                first: Box::new(first),
            }),
            Some(_) => {
                self.notes.push(format!(
                    "'{text}' also matched {} that {} refused (outside the target or not \
                     safe to read) and left out: {}.",
                    plural(skipped.len(), "file"),
                    if skipped.len() == 1 { "was" } else { "were" },
                    skipped.join(", ")
                ));
                Ok(())
            }
        }
    }

    /// find: `[-H|-P|-Olevel]... [--] [starting-point...] [expression]`.
    fn check_find(&mut self) -> Result<(), Refusal> {
        while let Some(word) = self.words.get(self.next) {
            let text = word.text();
            let digits_only = |s: &str| s.chars().all(|c| c.is_ascii_digit());
            match text.as_str() {
                "-H" | "-P" => self.push(text, ArgRole::Option),
                "-L" => {
                    return Err(find_refused(
                        "-L",
                        "it follows symbolic links, which can lead out of the target directory",
                    ));
                }
                "-D" => return Err(find_refused("-D", "debug options are not supported")),
                "--" => {
                    self.push(text, ArgRole::Option);
                    self.next += 1;
                    break;
                }
                level if level.starts_with("-O") && digits_only(&level[2..]) => {
                    self.push(text, ArgRole::Option)
                }
                _ => break,
            }
            self.next += 1;
        }
        while let Some(word) = self.words.get(self.next) {
            if looks_like_expression(&word.text()) {
                break;
            }
            self.next += 1;
            self.path_operand(word, Access::Metadata)?;
        }
        while let Some(word) = self.take() {
            let text = word.text();
            let primary = spec::find_primary(&text)
                .ok_or_else(|| Refusal::FindExpression { word: text.clone() })?;
            match primary {
                Primary::Operator | Primary::NoValue => self.push(text, ArgRole::Expression),
                Primary::Refused(why) => return Err(find_refused(&text, why)),
                Primary::Value | Primary::PathValue => {
                    let value =
                        self.take()
                            .map(Word::text)
                            .ok_or_else(|| Refusal::MissingValue {
                                option: text.clone(),
                            })?;
                    if primary == Primary::PathValue {
                        check_path(self.target, &value, Access::Metadata)?;
                    }
                    self.push(text, ArgRole::Expression);
                    let role = match primary {
                        Primary::PathValue => ArgRole::Path,
                        _ => ArgRole::OptionValue,
                    };
                    self.push(value, role);
                }
            }
        }
        Ok(())
    }
}

fn arg(text: impl Into<String>, role: ArgRole) -> Arg {
    Arg {
        text: text.into(),
        role,
    }
}

fn ready(text: impl Into<String>, role: ArgRole) -> Pending {
    Pending::Ready(arg(text, role))
}

fn find_refused(option: &str, why: &'static str) -> Refusal {
    Refusal::RefusedOption {
        program: "find",
        option: option.to_string(),
        why,
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Whether find reads `word` as the start of its expression rather than as
/// a starting point (findutils' rule for leading arguments).
fn looks_like_expression(word: &str) -> bool {
    (word.starts_with('-') && word.len() > 1) || word == "!" || word == "("
}

/// Check one path the program will touch.
fn check_path(target: &Path, raw: &str, access: Access) -> Result<(), Refusal> {
    match sandbox::resolve(target, raw) {
        Ok(real) => match access {
            Access::Metadata => Ok(()),
            Access::Read => match special_kind(&real) {
                Some(kind) => Err(Refusal::SpecialFile {
                    shown: raw.to_string(),
                    kind,
                }),
                None => Ok(()),
            },
        },
        Err(SandboxError::Missing { .. }) => check_missing(target, raw),
        Err(err) => Err(Refusal::Path(err)),
    }
}

/// A path that does not exist is passed on (the program will say so) only
/// when it cannot be anything else: nothing is at the path itself (not even a
/// dangling link), and its nearest existing ancestor resolves inside. The
/// sandbox has already checked that it stays inside lexically.
fn check_missing(target: &Path, raw: &str) -> Result<(), Refusal> {
    let joined = target.join(raw);
    let unresolvable = || Refusal::Unresolvable {
        shown: raw.to_string(),
    };
    if joined.symlink_metadata().is_ok() {
        return Err(unresolvable());
    }
    let mut ancestor = joined.parent();
    while let Some(dir) = ancestor {
        if dir.symlink_metadata().is_ok() {
            return match std::fs::canonicalize(dir) {
                Ok(real) if sandbox::is_within(target, &real) => Ok(()),
                Ok(_) => Err(Refusal::Path(SandboxError::Outside {
                    shown: raw.to_string(),
                })),
                Err(_) => Err(unresolvable()),
            };
        }
        ancestor = dir.parent();
    }
    Err(unresolvable())
}

/// What kind of non-regular, non-directory file `path` is, if it is one that
/// could block a reader.
fn special_kind(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let kind = path.metadata().ok()?.file_type();
    if kind.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_block_device() {
        Some("a block device")
    } else if kind.is_char_device() {
        Some("a character device")
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
