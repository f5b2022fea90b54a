//! The one definition of a directory's fingerprint: a digest of its *direct*
//! contents in the scan's scope (names, sizes and modification times of its
//! files, names of its subdirectories, targets of its symlinks).
//!
//! The investigation records it in each dir entry and compares it on the
//! next run (`crate::ai::rules::fingerprint` decides what a difference
//! means). It is taken twice per run, and both must agree byte for byte on
//! an unchanged directory: by the base scan's walk, from the listing it
//! already holds ([`of_listing`]), and by a dir loop when it starts, from
//! the disk. Both feed the entries to one [`FingerprintBuilder`], so the
//! encoding lives only here.
//!
//! The value is stored in caches, so its encoding is an interface: `v1:`
//! then the hex SHA-256 of `v1`, and for each entry sorted by name bytes a
//! `\n` and one line — the raw name, then `\0dir`, `\0link\0<target>` or
//! `\0file\0<size>\0<mtime secs>.<mtime nanos>` (FIFOs, sockets and devices
//! count as files). A directory that cannot be listed digests the single
//! line `unreadable <io::ErrorKind as Debug>`.

use std::ffi::OsStr;
use std::fmt;
use std::fs;
use std::io;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::walk::{Kind, Listing};

/// Bumped whenever what goes into a fingerprint changes, so old entries read
/// as changed instead of silently matching something else.
const VERSION: &str = "v1";

/// A directory's fingerprint: 32 bytes in memory, `v1:<hex>` when shown.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 32]);

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(VERSION)?;
        f.write_str(":")?;
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Digests a directory's entries. They must be added in ascending order of
/// their names' bytes (names are unique and hold no NUL, so this is also the
/// order of the lines, which is what the encoding sorts by).
pub(crate) struct FingerprintBuilder(Sha256);

impl Default for FingerprintBuilder {
    fn default() -> FingerprintBuilder {
        FingerprintBuilder::new()
    }
}

impl FingerprintBuilder {
    pub(crate) fn new() -> FingerprintBuilder {
        let mut hasher = Sha256::new();
        hasher.update(VERSION.as_bytes());
        FingerprintBuilder(hasher)
    }

    /// A subdirectory (not a symlink to one).
    pub(crate) fn dir(&mut self, name: &OsStr) {
        self.line(name, b"\0dir");
    }

    /// A symlink, described by its target (as `Path::display` shows it), not
    /// followed.
    pub(crate) fn link(&mut self, name: &OsStr, target: &Path) {
        self.line(name, format!("\0link\0{}", target.display()).as_bytes());
    }

    /// Anything else: a regular file, a FIFO, a socket or a device, as
    /// `lstat` sees it.
    pub(crate) fn file(&mut self, name: &OsStr, size: u64, mtime_secs: i64, mtime_nanos: i64) {
        self.line(
            name,
            format!("\0file\0{size}\0{mtime_secs}.{mtime_nanos}").as_bytes(),
        );
    }

    fn line(&mut self, name: &OsStr, detail: &[u8]) {
        self.0.update(b"\n");
        self.0.update(name.as_encoded_bytes());
        self.0.update(detail);
    }

    pub(crate) fn finish(self) -> Fingerprint {
        Fingerprint(self.0.finalize().into())
    }

    /// The fingerprint of a directory that could not be listed: it has one
    /// too, so that it is not investigated again on every run.
    pub(crate) fn unreadable(kind: io::ErrorKind) -> Fingerprint {
        let mut hasher = Sha256::new();
        hasher.update(VERSION.as_bytes());
        hasher.update(b"\n");
        hasher.update(format!("unreadable {kind:?}").as_bytes());
        Fingerprint(hasher.finalize().into())
    }
}

/// The fingerprint of the directory `dir` from the walk's `listing` of it.
/// The listing already leaves out what is out of scope except hidden names
/// (the walk keeps those for disk usage), so they are dropped here unless
/// `show_hidden`. Only symlinks cost a system call (`readlink`).
pub(crate) fn of_listing(dir: &Path, listing: &Listing, show_hidden: bool) -> Fingerprint {
    if let Some(error) = listing.error {
        return FingerprintBuilder::unreadable(error.kind());
    }
    let mut builder = FingerprintBuilder::new();
    // Listings are sorted by name bytes, as the builder needs.
    for entry in &listing.entries {
        if !show_hidden && entry.is_hidden() {
            continue;
        }
        match entry.kind {
            Kind::Dir => builder.dir(&entry.name),
            Kind::Symlink => {
                let target = fs::read_link(dir.join(&entry.name)).unwrap_or_default();
                builder.link(&entry.name, &target);
            }
            Kind::File | Kind::Other => {
                builder.file(&entry.name, entry.size, entry.mtime_secs, entry.mtime_nanos);
            }
        }
    }
    builder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoding is stored in caches: pin it against a digest computed
    /// from the documented lines.
    #[test]
    fn the_encoding_is_the_documented_one() {
        let mut builder = FingerprintBuilder::new();
        builder.file(OsStr::new("a.txt"), 3, 1_700_000_000, 5);
        builder.link(OsStr::new("l"), Path::new("../x"));
        builder.dir(OsStr::new("sub"));
        let text = "v1\na.txt\0file\x003\x001700000000.5\nl\0link\0../x\nsub\0dir";
        let expected = crate::text::hex(&Sha256::digest(text.as_bytes()));
        assert_eq!(builder.finish().to_string(), format!("v1:{expected}"));

        let unreadable = crate::text::hex(&Sha256::digest(b"v1\nunreadable PermissionDenied"));
        assert_eq!(
            FingerprintBuilder::unreadable(io::ErrorKind::PermissionDenied).to_string(),
            format!("v1:{unreadable}")
        );
    }
}
