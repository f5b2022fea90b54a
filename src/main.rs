//! The `luminos` binary: parse the command line, hand it to [`luminos::run`],
//! and turn the outcome into an exit code. Everything else lives in the library
//! so tests can drive it directly.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = luminos::cli::Args::parse_from_env();
    match luminos::run::run(args) {
        Ok(code) => code.into(),
        Err(err) => {
            luminos::output::print_error(&err);
            luminos::exit_codes::ExitCode::Failure.into()
        }
    }
}
