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
            Refusal::NotAllowed { name } => write!(
                f,
                "Error: '{name}' is not allowed. Allowed programs: {}.",
                spec::WHITELIST.join(", ")
            ),
            Refusal::UnknownOption {
                program,
                option,
                hint,
            } => {
                write!(
                    f,
                    "Error: {program} option '{option}' is not supported here"
                )?;
                match hint {
                    Some(full) => write!(f, "; spell it out in full: '--{full}'."),
                    None => write!(f, "."),
                }
            }
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
            Refusal::Unresolvable { shown } => write!(
                f,
                "Error: path '{shown}' exists but cannot be resolved (a dangling symbolic \
                 link?), so it is refused."
            ),
            Refusal::SpecialFile { shown, kind } => write!(
                f,
                "Error: '{shown}' is {kind}; reading it could block forever, so it is \
                 refused (stat can describe it)."
            ),
            Refusal::NotRegularFile { option, shown } => write!(
                f,
                "Error: the file given to '{option}' ('{shown}') must be a regular file \
                 inside the target directory."
            ),
            Refusal::Stdin => write!(
                f,
                "Error: '-' (standard input) is not available; name the files to read."
            ),
            Refusal::NoGlobMatch { pattern } => write!(
                f,
                "Error: no files match '{pattern}' inside the target directory (quote the \
                 pattern to pass it literally)."
            ),
            Refusal::GlobTooBroad { pattern } => write!(
                f,
                "Error: '{pattern}' matches too many files (more than {} or too many \
                 directory entries to scan); narrow it or use find.",
                glob::MAX_MATCHES
            ),
            Refusal::GlobAllSkipped { pattern, first } => write!(
                f,
                "Error: every match of '{pattern}' was refused; the first: {}",
                first.to_string().trim_start_matches("Error: ")
            ),
            Refusal::FindExpression { word } => write!(
                f,
                "Error: find: '{word}' is not a supported test, option or operator (or a \
                 path placed after the expression)."
            ),
        }
    }
}

impl std::error::Error for Refusal {}
