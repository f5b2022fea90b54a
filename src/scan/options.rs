//! What the base scan looks at: the options it shares with directory
//! discovery and the agents' listings, so that all of them see one scope.
//! The run's configuration fills them in from the command line, and holds
//! their defaults (`ScanOptions::default`).

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
