//! `flags {target, severity?}`: the cached investigation's findings, most
//! severe first, optionally only those at least as severe as asked.

use indexmap::IndexMap;
use serde::Serialize;

use super::convert::ToolFailure;
use super::read::{TreeBlock, read, shown, tree_block};
use super::tools::{Call, FlagsArgs};
use crate::report::{Flag, Severity};

/// The answer of `flags`: the flags kept, and how many of each severity
/// the investigation raised.
#[derive(Debug, Serialize)]
pub(super) struct FlagsAnswer {
    target: String,
    severity: Option<Severity>,
    flags: Vec<Flag>,
    counts: IndexMap<Severity, usize>,
    tree: TreeBlock,
}

/// Answer `flags`.
pub(super) async fn flags(call: &Call, args: FlagsArgs) -> Result<FlagsAnswer, ToolFailure> {
    let (config, cached) = read(call, &args.target).await?;
    let all = &cached.report.flags;
    let counts = Severity::ALL
        .into_iter()
        .map(|severity| {
            let n = all.iter().filter(|flag| flag.severity == severity).count();
            (severity, n)
        })
        .collect();
    let flags = at_least(all, args.severity.as_ref())
        .into_iter()
        .cloned()
        .collect();
    Ok(FlagsAnswer {
        target: shown(&config),
        severity: args.severity,
        flags,
        counts,
        tree: tree_block(&cached.changes),
    })
}

/// The flags at least as severe as `severity` (all without one), in the
/// order given.
fn at_least<'a>(flags: &'a [Flag], severity: Option<&Severity>) -> Vec<&'a Flag> {
    flags
        .iter()
        .filter(|flag| severity.is_none_or(|limit| flag.severity <= *limit))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_severity_keeps_what_is_at_least_as_severe() {
        let flags = [
            Flag::new("a", "x", "critical"),
            Flag::new("b", "x", "concern"),
            Flag::new("c", "x", "info"),
            Flag::new("d", "x", "odd"),
        ];
        let paths = |severity: Option<Severity>| -> Vec<&str> {
            at_least(&flags, severity.as_ref())
                .iter()
                .map(|f| f.path.as_str())
                .collect()
        };
        assert_eq!(paths(None), ["a", "b", "c", "d"]);
        assert_eq!(paths(Some(Severity::Info)), ["a", "b", "c"]);
        assert_eq!(paths(Some(Severity::Concern)), ["a", "b"]);
        assert_eq!(paths(Some(Severity::Critical)), ["a"]);
    }
}
