//! What luminos itself writes inside the target: the `-o` report (the
//! README suggests `-o DIR/LUMINOS.md`) and the cache, when
//! `LUMINOS_CACHE_DIR` puts it there. These are left out of the scan, the
//! fingerprints and the report ([`crate::scan::ScanOptions::own_outputs`]):
//! otherwise writing the report would change the target's root, and every
//! rerun of an unchanged tree would pay to investigate the root and write
//! the synthesis again, and the report would describe itself.
//!
//! Paths are judged lexically on the target as given, then through the
//! real directory that would hold them (the target reached by a symlink,
//! or `-o ./LUMINOS.md` from inside it), without creating anything.

use std::path::{Path, PathBuf};

use crate::paths::absolute;

/// Each of `paths` that lies inside the target, relative to it (the
/// target itself is not one: luminos never writes over it).
pub(crate) fn own_outputs(target: &Path, target_canonical: &Path, paths: &[&Path]) -> Vec<PathBuf> {
    let mut inside: Vec<PathBuf> = paths
        .iter()
        .filter_map(|path| relative_inside(target, target_canonical, path))
        .collect();
    inside.sort();
    inside.dedup();
    inside
}

fn relative_inside(target: &Path, target_canonical: &Path, path: &Path) -> Option<PathBuf> {
    let lexical = absolute(path);
    let non_empty = |rel: &Path| (!rel.as_os_str().is_empty()).then(|| rel.to_path_buf());
    if let Ok(rel) = lexical.strip_prefix(target) {
        return non_empty(rel);
    }
    // Through the real directory that holds it: symlinks resolved, as the
    // scan's walk of the canonical target would meet it.
    let name = lexical.file_name()?;
    let parent = std::fs::canonicalize(lexical.parent()?).ok()?;
    let real = parent.join(name);
    non_empty(real.strip_prefix(target_canonical).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_the_target_are_relative_and_others_are_not_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let target = std::fs::canonicalize(tmp.path()).unwrap().join("t");
        std::fs::create_dir_all(target.join("docs")).unwrap();
        let link = target.parent().unwrap().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let found = own_outputs(
            &link,
            &target,
            &[
                &link.join("LUMINOS.md"),
                &target.join("docs/../cache"),
                &target.join("docs/report.html"),
                &target.parent().unwrap().join("elsewhere.md"),
                &link,
                Path::new("/tmp/luminos"),
            ],
        );
        assert_eq!(
            found,
            [
                PathBuf::from("LUMINOS.md"),
                PathBuf::from("cache"),
                PathBuf::from("docs/report.html"),
            ]
        );
    }
}
