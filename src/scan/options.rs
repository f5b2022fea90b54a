//! What the base scan looks at: the options it shares with directory
//! discovery and the agents' listings, so that all of them see one scope.
//! The scan owns these and their defaults; [`crate::config`] fills them in
//! from the command line.

/// Depth of the rendered tree when `-d` is not given.
pub(crate) const DEFAULT_DEPTH: usize = 3;

/// Options shared by the base scan and directory discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOptions {
    /// Depth of the rendered tree (`-d`).
    pub depth: usize,
    /// Include hidden names (`-a`).
    pub show_hidden: bool,
    /// Directory names excluded everywhere (`-x`).
    pub exclude: Vec<String>,
    /// Respect `.gitignore`, `.ignore` and `.git/info/exclude` (not `--no-ignore`).
    pub respect_ignore: bool,
    /// Directory names the built-in skip list (or a `CACHEDIR.TAG`) would
    /// keep from the investigation, taken back (`--include`).
    pub include: Vec<String>,
    /// What luminos itself writes inside the target (the `-o` report, a
    /// cache placed there), relative to the target: left out of the scan,
    /// the fingerprints and the report, as if it were not there, so that
    /// writing it does not make the next run see a changed tree.
    pub own_outputs: Vec<std::path::PathBuf>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            depth: DEFAULT_DEPTH,
            show_hidden: false,
            exclude: Vec::new(),
            respect_ignore: true,
            include: Vec::new(),
            own_outputs: Vec::new(),
        }
    }
}
