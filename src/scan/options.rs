//! What the base scan looks at: the options it shares with directory
//! discovery and the agents' listings, so that all of them see one scope.
//! [`crate::config`] fills them in from the command line, and holds their
//! defaults (`ScanOptions::default`).

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
