//! `flags {target, severity?}`: the cached investigation's findings, most
//! severe first, optionally only those at least as severe as asked.

use indexmap::IndexMap;
use serde::Serialize;

use super::convert::ToolFailure;
use super::read::{TreeBlock, read, shown, tree_block};
use super::tools::{Call, FlagsArgs, SeverityArg};
use crate::report::{Flag, SEVERITY_ORDER, severity_rank};

/// The answer of `flags`: the flags kept, and how many of each severity
/// the investigation raised.
#[derive(Debug, Serialize)]
pub(super) struct FlagsAnswer {
    target: String,
    severity: Option<&'static str>,
    flags: Vec<Flag>,
    counts: IndexMap<&'static str, usize>,
    tree: TreeBlock,
}

/// Answer `flags`.
pub(super) async fn flags(call: &Call, args: FlagsArgs) -> Result<FlagsAnswer, ToolFailure> {
    let (config, cached) = read(call, &args.target).await?;
    let all = &cached.report.flags;
    let counts = SEVERITY_ORDER
        .iter()
        .map(|severity| {
            let n = all.iter().filter(|flag| flag.severity == *severity).count();
            (*severity, n)
        })
        .collect();
    Ok(FlagsAnswer {
        target: shown(&config),
        severity: args.severity.map(SeverityArg::as_str),
        flags: at_least(all, args.severity).into_iter().cloned().collect(),
        counts,
        tree: tree_block(&cached.changes),
    })
}

/// The flags at least as severe as `severity` (all without one), in the
/// order given.
fn at_least(flags: &[Flag], severity: Option<SeverityArg>) -> Vec<&Flag> {
    let limit = severity.map_or(usize::MAX, |s| severity_rank(s.as_str()));
    flags
        .iter()
        .filter(|flag| severity_rank(&flag.severity) <= limit)
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
        let paths = |severity| -> Vec<&str> {
            at_least(&flags, severity)
                .iter()
                .map(|f| f.path.as_str())
                .collect()
        };
        assert_eq!(paths(None), ["a", "b", "c", "d"]);
        assert_eq!(paths(Some(SeverityArg::Info)), ["a", "b", "c"]);
        assert_eq!(paths(Some(SeverityArg::Concern)), ["a", "b"]);
        assert_eq!(paths(Some(SeverityArg::Critical)), ["a"]);
    }
}
