//! The four passes of an investigation, one module each: the [`survey`]
//! orients, [`planning`] allocates turns, [`dir_loop`] investigates one
//! directory (or unit), and [`synthesis`] writes the verdict; and the one
//! without a model, [`mechanical`], which summarises a directory no loop
//! investigates.
//!
//! A pass builds its prompt, calls the model through the engine
//! ([`crate::ai::engine`]) and returns a proposal; deterministic code in
//! [`crate::ai::rules`] normalizes it. Which pass runs when is the
//! orchestrator's business ([`crate::ai::orchestrator`]).

pub mod dir_loop;
pub mod mechanical;
pub mod planning;
pub mod survey;
pub mod synthesis;
