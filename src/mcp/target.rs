//! A tool call's target, resolved into the run's [`Config`] by the command
//! line's own rules: the call's arguments become the argv a user would
//! type (`luminos [flags] -- TARGET`), parsed by clap and resolved with the
//! environment the server started with. So a target that does not exist,
//! is a file or cannot be listed gets the CLI's one-line error, and
//! `budget` means and accepts what `--budget` does.
//!
//! Targets are paths on the server's machine; a relative one is taken
//! from the server's working directory, as the command line would.

use clap::Parser;

use crate::cli::Args;
use crate::config::{Config, Env, Invocation};

use super::convert::ToolFailure;

/// No command-line flags: the run's defaults.
pub(super) const NO_FLAGS: &[&str] = &[];

/// The configuration of a run over `target` with the command-line `flags`
/// (`["--budget", "2"]`), in `env`.
pub(super) fn resolve(
    env: &Env,
    flags: &[impl AsRef<str>],
    target: &str,
) -> Result<Config, ToolFailure> {
    // `--` keeps a target that starts with `-` (or is named `mcp`) a path.
    let argv = ["luminos"]
        .into_iter()
        .chain(flags.iter().map(AsRef::as_ref))
        .chain(["--", target]);
    match invocation(argv, env)? {
        Invocation::Run { config, .. } => Ok(*config),
        Invocation::ClearCacheOnly { .. } | Invocation::Ask { .. } | Invocation::Mcp => {
            Err(no_target())
        }
    }
}

/// The configuration of `luminos ask [flags] -- TARGET QUESTION` in `env`:
/// the question's own budget (`flags` may set it, as `--budget` does) and
/// the run's settings for the rest.
pub(super) fn resolve_ask(
    env: &Env,
    flags: &[impl AsRef<str>],
    target: &str,
    question: &str,
) -> Result<Config, ToolFailure> {
    let argv = ["luminos", "ask"]
        .into_iter()
        .chain(flags.iter().map(AsRef::as_ref))
        .chain(["--", target, question]);
    match invocation(argv, env)? {
        Invocation::Ask { config, .. } => Ok(*config),
        Invocation::Run { .. } | Invocation::ClearCacheOnly { .. } | Invocation::Mcp => {
            Err(no_target())
        }
    }
}

/// `argv` parsed as the command line and resolved in `env`; clap's error
/// or the resolver's as the call's one line.
fn invocation<'a>(
    argv: impl IntoIterator<Item = &'a str>,
    env: &Env,
) -> Result<Invocation, ToolFailure> {
    let args = Args::try_parse_from(argv).map_err(ToolFailure::Usage)?;
    Ok(Invocation::resolve(args, env)?)
}

/// What a call is told when its arguments resolved to something other than
/// the work it asked for.
fn no_target() -> ToolFailure {
    ToolFailure::NoTarget
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::money::Usd;

    #[test]
    fn targets_get_the_command_lines_errors() {
        let env = Env::default();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file.txt");
        std::fs::write(&file, "x").unwrap();
        let missing = dir.path().join("missing");
        let shown = missing.to_string_lossy();
        assert_eq!(
            resolve(&env, NO_FLAGS, &shown).unwrap_err().to_string(),
            format!("'{shown}' is not a directory or does not exist.")
        );
        let shown = file.to_string_lossy();
        assert_eq!(
            resolve(&env, NO_FLAGS, &shown).unwrap_err().to_string(),
            format!(
                "'{shown}' is a file; luminos investigates a directory (the one that holds it, \
                 say)"
            )
        );
        // A name that looks like a flag, or like the subcommand, is a path.
        let named = dir.path().join("-x");
        std::fs::create_dir(&named).unwrap();
        let config = resolve(&env, NO_FLAGS, &named.to_string_lossy()).unwrap();
        assert_eq!(config.target_canonical, named.canonicalize().unwrap());
    }

    #[test]
    fn the_budget_is_the_command_lines() {
        let env = Env::default();
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().to_string_lossy();
        let config = resolve(&env, &["--budget", "$2.5"], &target).unwrap();
        assert_eq!(config.investigation.budget, Some(Usd::new(2.5)));
        let none = resolve(&env, &["--budget", "none"], &target).unwrap();
        assert_eq!(none.investigation.budget, None);
        // A question has its own default budget, and takes `--budget` too.
        let asked = resolve_ask(&env, NO_FLAGS, &target, "-why?").unwrap();
        assert_eq!(
            asked.investigation.budget,
            Some(crate::config::defaults::DEFAULT_ASK_BUDGET_USD)
        );
        let asked = resolve_ask(&env, &["--budget", "0.2"], &target, "why?").unwrap();
        assert_eq!(asked.investigation.budget, Some(Usd::new(0.2)));
        let err = resolve(&env, &["--budget", "0"], &target).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value '0' for '--budget <USD>': a dollar amount above zero, such as 5, or \
             none"
        );
    }
}
