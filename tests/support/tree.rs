//! [`TestEnv`]: a temporary target tree, a private cache directory and a
//! command builder for the real `luminos` binary.

use std::path::{Path, PathBuf};

use std::process::Command;
use tempfile::TempDir;

/// A temp dir holding `target/` (the tree under test) and `cache/` (the
/// cache root for every command built here).
pub struct TestEnv {
    root: TempDir,
    target: PathBuf,
    cache: PathBuf,
    base_url: String,
}

/// The `luminos` binary cargo built for this test run.
pub fn luminos_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_luminos"))
}

impl TestEnv {
    /// An empty target and cache. Commands point at a closed local port until
    /// [`TestEnv::with_base_url`] says otherwise.
    pub fn new() -> TestEnv {
        TestEnv::in_dir(super::fs::temp_dir("luminos-test-"))
    }

    /// Like [`TestEnv::new`], but in the system temp dir (on disk) even
    /// where the suite's temp dirs live in memory: for the few tests that
    /// compare with a tool whose result depends on the order a file system
    /// lists a directory in (see `support::fs::temp_base`).
    pub fn on_disk() -> TestEnv {
        TestEnv::in_dir(super::fs::disk_temp_dir("luminos-test-"))
    }

    fn in_dir(root: TempDir) -> TestEnv {
        let target = root.path().join("target");
        let cache = root.path().join("cache");
        std::fs::create_dir_all(&target).unwrap();
        TestEnv {
            root,
            target,
            cache,
            // Port 9 (discard) is closed on loopback: connections are refused at once.
            base_url: "http://127.0.0.1:9".to_string(),
        }
    }

    /// Point every command at this API base URL (usually a mock server).
    pub fn with_base_url(mut self, url: impl Into<String>) -> TestEnv {
        self.base_url = url.into();
        self
    }

    /// The directory holding target/ and cache/.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The target directory.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The cache root given to commands as `LUMINOS_CACHE_DIR`.
    pub fn cache(&self) -> &Path {
        &self.cache
    }

    /// `target/<rel>` as an absolute path.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.target.join(rel)
    }

    /// Write a file (creating parent directories) under the target.
    pub fn file(&self, rel: &str, content: impl AsRef<[u8]>) -> &Self {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, content).unwrap();
        self
    }

    /// The small project most end-to-end tests investigate: 4 directories
    /// (`.`, `src`, `src/core`, `docs`) and 6 files, not a tiny target.
    pub fn small_project(&self) -> &Self {
        self.file("README.md", "# Demo\n")
            .file("Cargo.toml", "[package]\nname = \"demo\"\n")
            .file("src/main.rs", "fn main() {}\n")
            .file("src/core/engine.rs", "pub fn run() {}\n")
            .file("src/core/model.rs", "pub struct Model;\n")
            .file("docs/guide.md", "Guide\n")
    }

    /// A new env whose target is [`TestEnv::small_project`].
    pub fn with_small_project() -> TestEnv {
        let env = TestEnv::new();
        env.small_project();
        env
    }

    /// A new env whose target has seven directories, three deep under
    /// `src`, so parents wait on children.
    pub fn with_deep_project() -> TestEnv {
        let env = TestEnv::new();
        env.files(&[
            ("README.md", "# Demo\n"),
            ("Cargo.toml", "[package]\nname = \"demo\"\n"),
            ("src/lib.rs", "pub mod net;\npub mod db;\n"),
            ("src/net/http.rs", "pub fn get() {}\n"),
            ("src/net/tls/cert.rs", "pub struct Cert;\n"),
            ("src/db/pool.rs", "pub struct Pool;\n"),
            ("docs/guide.md", "Guide\n"),
            ("tests/it.rs", "#[test] fn it() {}\n"),
        ]);
        env
    }

    /// Give every file under the target the modification time `secs` after
    /// the epoch (whole seconds): a tree whose fingerprints a fixture
    /// written elsewhere can match.
    pub fn set_mtimes(&self, secs: u64) -> &Self {
        let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        for entry in walkdir::WalkDir::new(&self.target) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                let file = std::fs::File::options()
                    .write(true)
                    .open(entry.path())
                    .unwrap();
                file.set_modified(time).unwrap();
            }
        }
        self
    }

    /// Run `luminos [extra] TARGET` with [`TestEnv::cmd`] and insist that it
    /// succeeds, showing its stderr when it does not.
    pub fn run_ok(&self, extra: &[&str]) -> std::process::Output {
        super::output::assert_success(self.output(extra), "luminos")
    }

    /// Run `luminos [extra] TARGET` with [`TestEnv::cmd`], whatever its
    /// exit: for the tests that check a failure or read both streams.
    pub fn output(&self, extra: &[&str]) -> std::process::Output {
        let output = self.cmd().args(extra).arg(self.target()).output();
        output.expect("run luminos")
    }

    /// Write files (creating parent directories) under the target: `(path,
    /// content)` pairs, so a test's tree reads as one list.
    pub fn files(&self, files: &[(&str, &str)]) -> &Self {
        for (rel, content) in files {
            self.file(rel, content);
        }
        self
    }

    /// Write files of the given sizes in bytes under the target, the n-th
    /// (from 1) filled with byte n, so no two have the same content: trees
    /// whose sizes are what a test counts.
    pub fn sized_files(&self, files: &[(&str, usize)]) -> &Self {
        for (n, (rel, size)) in (1u8..).zip(files) {
            self.file(rel, vec![n; *size]);
        }
        self
    }

    /// Create a directory (and parents) under the target.
    pub fn dir(&self, rel: &str) -> &Self {
        std::fs::create_dir_all(self.path(rel)).unwrap();
        self
    }

    /// Create a symlink at `rel` pointing to `to` (as given).
    pub fn symlink(&self, to: impl AsRef<Path>, rel: &str) -> &Self {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::os::unix::fs::symlink(to, path).unwrap();
        self
    }

    /// The `luminos` binary with a clean, isolated environment: no inherited
    /// ANTHROPIC_* / LUMINOS_* variables, a test key, this env's cache root
    /// and base URL, and the working directory at the env root.
    pub fn cmd(&self) -> Command {
        let mut cmd = self.bare_cmd();
        cmd.env("ANTHROPIC_API_KEY", "test-key");
        cmd
    }

    /// Like [`TestEnv::cmd`] but with no credential at all.
    pub fn bare_cmd(&self) -> Command {
        let mut cmd = Command::new(luminos_bin());
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            if key.starts_with("ANTHROPIC_") || key.starts_with("LUMINOS_") || key == "NO_COLOR" {
                cmd.env_remove(&key);
            }
        }
        cmd.env("LUMINOS_CACHE_DIR", &self.cache)
            .env("ANTHROPIC_BASE_URL", &self.base_url)
            .current_dir(self.root.path());
        cmd
    }

    /// When the tests run as root, make `cmd` run as nobody (65534) so that
    /// permission bits bite, opening the env's own directories to it (its
    /// cache root becomes `cache/own`).
    /// Returns false when that is impossible here (the binary is not
    /// reachable by other users); `cmd` then runs as the current user.
    pub fn run_unprivileged(&self, cmd: &mut std::process::Command) -> bool {
        use std::os::unix::fs::PermissionsExt;
        use std::os::unix::process::CommandExt;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return true;
        }
        let bin = luminos_bin();
        let reachable =
            bin.ancestors().skip(1).all(|dir| {
                std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0)
            }) && std::fs::metadata(&bin).is_ok_and(|m| m.permissions().mode() & 0o001 != 0);
        if !reachable {
            return false;
        }
        let open = |dir: &Path, mode: u32| {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        open(self.root(), 0o755);
        open(self.target(), 0o755);
        // The cache root must belong to the user running luminos: it is
        // created by that user inside the shared cache directory.
        open(self.cache(), 0o777);
        cmd.env("LUMINOS_CACHE_DIR", self.cache().join("own"))
            .uid(65534)
            .gid(65534);
        true
    }
}
