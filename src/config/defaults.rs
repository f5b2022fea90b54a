//! Every default a run takes when neither a flag nor a variable says
//! otherwise, in one place: the command line's help names them from here,
//! and resolving the configuration fills them in from here. The layers
//! below are handed the resolved values and define no defaults of their own
//! for what the user may choose.
//!
//! Two defaults are facts of a lower layer, named here so that this is
//! still the one list: the model (the current Sonnet, a catalog fact the
//! catalog also uses as a stand-in) and the client's retries and endpoint
//! (settings the Messages client owns).

pub(crate) use crate::ai::api::DEFAULT_BASE_URL;
pub(crate) use crate::ai::api::DEFAULT_MODEL;
pub(crate) use crate::ai::api::retry::{DEFAULT_MAX_RETRIES, MAX_RETRIES_LIMIT};
use crate::money::Usd;

/// What one run may spend when `--budget` does not say, in dollars.
pub(crate) const DEFAULT_BUDGET_USD: Usd = Usd::new(5.0);
/// What a question (`luminos ask`) may spend when `--budget` does not say,
/// in dollars.
pub(crate) const DEFAULT_ASK_BUDGET_USD: Usd = Usd::new(0.50);
/// Directory loops run at once when `-j` is not given.
pub(crate) const DEFAULT_JOBS: u32 = 4;
/// Depth of the rendered tree when `-d` is not given.
pub(crate) const DEFAULT_DEPTH: usize = 3;
/// Rounds of refinement `--refine` asks for without `--refine-depth`.
pub(crate) const DEFAULT_REFINE_ROUNDS: u32 = 1;
/// Where investigations are cached when `LUMINOS_CACHE_DIR` is unset.
pub(crate) const DEFAULT_CACHE_ROOT: &str = "/tmp/luminos";

/// The scan's options when no flag says otherwise: the rendered tree
/// [`DEFAULT_DEPTH`] deep, hidden names left out, ignore files respected,
/// nothing excluded.
impl Default for crate::scan::ScanOptions {
    fn default() -> Self {
        crate::scan::ScanOptions {
            depth: DEFAULT_DEPTH,
            show_hidden: false,
            exclude: Vec::new(),
            respect_ignore: true,
            include: Vec::new(),
            own_outputs: Vec::new(),
        }
    }
}
