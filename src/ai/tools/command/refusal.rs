//! Why a command was refused, worded for the model.
//!
//! Every refusal says what was refused and why, and where it helps, what to
//! do instead. The checker ([`super::check`](mod@super::check)) decides; this module only
//! names the decisions.

use std::fmt;

use super::argv::SplitError;
use super::glob;
use super::spec;
use crate::ai::tools::sandbox::SandboxError;

/// Longer command lines are refused outright.
pub(crate) const MAX_COMMAND_BYTES: usize = 8 * 1024;

/// Why a command was refused. `Display` is the message the model sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Empty,
    TooLong,
    Split(SplitError),
    NotAllowed {
        name: String,
    },
    UnknownOption {
        program: &'static str,
        option: String,
        hint: Option<String>,
    },
    UnexpectedValue {
        option: String,
    },
    MissingValue {
        option: String,
    },
    RefusedOption {
        program: &'static str,
        option: String,
        why: &'static str,
    },
    BadValue {
        option: String,
        value: String,
        allowed: &'static str,
    },
    Path(SandboxError),
    Unresolvable {
        shown: String,
    },
    SpecialFile {
        shown: String,
        kind: &'static str,
    },
    NotRegularFile {
        option: String,
        shown: String,
    },
    Stdin,
    NoGlobMatch {
        pattern: String,
    },
    GlobTooBroad {
        pattern: String,
    },
    GlobAllSkipped {
        pattern: String,
        first: Box<Refusal>,
    },
    FindExpression {
        word: String,
    },
}

impl From<SplitError> for Refusal {
    fn from(err: SplitError) -> Self {
        Refusal::Split(err)
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Empty => write!(f, "Error: empty command."),
            Refusal::TooLong => {
                write!(
                    f,
                    "Error: the command is longer than {MAX_COMMAND_BYTES} bytes."
                )
            }
            Refusal::Split(err) => err.fmt(f),
            Refusal::NotAllowed { name } => not_allowed(f, name),
            Refusal::UnknownOption {
                program,
                option,
                hint,
            } => unknown_option(f, program, option, hint.as_deref()),
            Refusal::UnexpectedValue { option } => {
                write!(f, "Error: option '{option}' does not take a value.")
            }
            Refusal::MissingValue { option } => {
                write!(f, "Error: option '{option}' needs a value.")
            }
            Refusal::RefusedOption {
                program,
                option,
                why,
            } => {
                write!(f, "Error: {program} '{option}' is refused: {why}.")
            }
            Refusal::BadValue {
                option,
                value,
                allowed,
            } => write!(
                f,
                "Error: '{value}' is not allowed for '{option}'; only {allowed} is."
            ),
            Refusal::Path(err) => err.fmt(f),
            Refusal::Unresolvable { shown } => unresolvable(f, shown),
            Refusal::SpecialFile { shown, kind } => special_file(f, shown, kind),
            Refusal::NotRegularFile { option, shown } => not_regular_file(f, option, shown),
            Refusal::Stdin => stdin(f),
            Refusal::NoGlobMatch { pattern } => no_glob_match(f, pattern),
            Refusal::GlobTooBroad { pattern } => glob_too_broad(f, pattern),
            Refusal::GlobAllSkipped { pattern, first } => glob_all_skipped(f, pattern, first),
            Refusal::FindExpression { word } => find_expression(f, word),
        }
    }
}

// The longer messages, one function each, so `fmt` stays one exhaustive
// match that reads as the list of refusals.

/// A program outside the whitelist: the message lists the allowed ones.
fn not_allowed(f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
    write!(
        f,
        "Error: '{name}' is not allowed. Allowed programs: {}.",
        spec::WHITELIST.join(", ")
    )
}

/// An option the program's spec does not know; `hint` is the long option an
/// abbreviation would have meant, which must be spelt out.
fn unknown_option(
    f: &mut fmt::Formatter<'_>,
    program: &str,
    option: &str,
    hint: Option<&str>,
) -> fmt::Result {
    write!(
        f,
        "Error: {program} option '{option}' is not supported here"
    )?;
    match hint {
        Some(full) => write!(f, "; spell it out in full: '--{full}'."),
        None => write!(f, "."),
    }
}

/// A path that exists but does not resolve (a dangling link, say).
fn unresolvable(f: &mut fmt::Formatter<'_>, shown: &str) -> fmt::Result {
    write!(
        f,
        "Error: path '{shown}' exists but cannot be resolved (a dangling symbolic \
         link?), so it is refused."
    )
}

/// A FIFO, socket or device: reading it could block forever.
fn special_file(f: &mut fmt::Formatter<'_>, shown: &str, kind: &str) -> fmt::Result {
    write!(
        f,
        "Error: '{shown}' is {kind}; reading it could block forever, so it is \
         refused (stat can describe it)."
    )
}

/// An option that reads a file (a pattern file, say) was given something
/// else.
fn not_regular_file(f: &mut fmt::Formatter<'_>, option: &str, shown: &str) -> fmt::Result {
    write!(
        f,
        "Error: the file given to '{option}' ('{shown}') must be a regular file \
         inside the target directory."
    )
}

/// `-` as a file: there is no standard input to read.
fn stdin(f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(
        f,
        "Error: '-' (standard input) is not available; name the files to read."
    )
}

/// A glob that matched nothing inside the target.
fn no_glob_match(f: &mut fmt::Formatter<'_>, pattern: &str) -> fmt::Result {
    write!(
        f,
        "Error: no files match '{pattern}' inside the target directory (quote the \
         pattern to pass it literally)."
    )
}

/// A glob past the expansion's limits.
fn glob_too_broad(f: &mut fmt::Formatter<'_>, pattern: &str) -> fmt::Result {
    write!(
        f,
        "Error: '{pattern}' matches too many files (more than {} or too many \
         directory entries to scan); narrow it or use find.",
        glob::MAX_MATCHES
    )
}

/// A glob whose every match was refused: the first refusal says why, without
/// its own "Error: ".
fn glob_all_skipped(f: &mut fmt::Formatter<'_>, pattern: &str, first: &Refusal) -> fmt::Result {
    write!(
        f,
        "Error: every match of '{pattern}' was refused; the first: {}",
        first.to_string().trim_start_matches("Error: ")
    )
}

/// A word in a find expression that find's spec does not know.
fn find_expression(f: &mut fmt::Formatter<'_>, word: &str) -> fmt::Result {
    write!(
        f,
        "Error: find: '{word}' is not a supported test, option or operator (or a \
         path placed after the expression)."
    )
}

impl std::error::Error for Refusal {}
