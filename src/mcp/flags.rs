//! `flags {target, severity?}`: the cached investigation's findings, most
//! severe first, optionally only those at least as severe as asked.

use serde_json::{Value, json};

use super::convert::ToolFailure;
use super::read::{read, shown, tree_block};
use super::tools::{Call, FlagsArgs, SeverityArg};
use crate::report::{Flag, SEVERITY_ORDER, severity_rank};

/// Answer `flags`.
pub(super) async fn flags(call: &Call, args: FlagsArgs) -> Result<Value, ToolFailure> {
    let (config, cached) = read(call, &args.target).await?;
    let all = &cached.report.flags;
    let kept = at_least(all, args.severity);
    let counts: serde_json::Map<String, Value> = SEVERITY_ORDER
        .iter()
        .map(|severity| {
            let n = all.iter().filter(|flag| flag.severity == *severity).count();
            (severity.to_string(), json!(n))
        })
        .collect();
    Ok(json!({
        "target": shown(&config),
        "severity": args.severity.map(SeverityArg::as_str),
        "flags": kept,
        "counts": counts,
        "tree": tree_block(&cached.changes),
    }))
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
