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
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            depth: DEFAULT_DEPTH,
            show_hidden: false,
            exclude: Vec::new(),
            respect_ignore: true,
        }
    }
}
