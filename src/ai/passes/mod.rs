//! The four passes of an investigation, one module each: the [`survey`]
//! orients, [`planning`] allocates turns, [`dir_loop`] investigates one
//! directory (or unit), and [`synthesis`] writes the verdict; with
//! `--refine`, [`refine`] goes back to what they were unsure of; and the one
//! without a model, [`mechanical`], which summarises a directory no loop
//! investigates. The dir loops and the mechanical entries are the work the
//! [`scheduler`] runs, children first, `-j` at a time.
//!
//! A pass builds its prompt, calls the model through the engine
//! ([`crate::ai::engine`]) and returns a proposal; deterministic code in
//! [`crate::ai::rules`] normalizes it. Which pass runs when is the
//! orchestrator's business ([`crate::ai::orchestrator`]). The passes that
//! end in one submit call share their conversation ([`one_call`]).

pub mod dir_loop;
pub(crate) mod mechanical;
pub(crate) mod one_call;
pub(crate) mod planning;
pub(crate) mod refine;
pub(crate) mod scheduler;
pub(crate) mod survey;
pub(crate) mod synthesis;

/// Record that the model declined `what` as an `info` flag on `path`, so
/// the report says why that part is missing. Failing to record it is only
/// a warning: the refusal is on stderr already.
pub(crate) fn record_refusal(
    cache: &crate::cache::Cache,
    progress: &crate::progress::Progress,
    path: &str,
    finding: String,
) {
    let flag = crate::report::Flag::new(path, finding, "info");
    if let Err(err) = cache.append_flag(&flag) {
        progress.ai(&format!("Warning: could not record a flag: {err}"));
    }
}
