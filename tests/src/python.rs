//! Pinned Python packages for the suites that check us against implementations written in
//! Python: one venv under the target directory per set of pins, created on first use and
//! reused after. Also pinned npm packages ([`npm_package`]: the MCP conformance suite, the
//! TypeScript compiler), installed the same way.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `install` to fill `dir` unless an earlier run finished doing so, once however many
/// test threads and test binaries ask at the same time: the first takes a lock file beside
/// `dir` and the others wait for it, then find the marker it left. Two `pip install`s into
/// one venv at once break each other (CI saw one fail on a `.pyc` the other had moved). A
/// `dir` without its marker is what an interrupted install left, and is made again.
pub fn install_once(dir: &Path, install: impl FnOnce()) {
    let marker = dir.join(".installed");
    if marker.exists() {
        return;
    }
    let mut lock_path = OsString::from(dir.as_os_str());
    lock_path.push(".lock");
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).expect("the target directory can be created");
    }
    let lock = File::create(&lock_path).expect("the install lock file can be created");
    lock.lock().expect("the install lock can be taken");
    if marker.exists() {
        return;
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).expect("a half-made install can be removed");
    }
    install();
    std::fs::write(&marker, "").expect("the install marker can be written");
}

/// A venv holding exact versions of some PyPI packages, and who needs it.
#[derive(Debug, Clone, Copy)]
pub struct PinnedVenv<'a> {
    /// Starts the venv's directory name, which the pins complete (`gbnf`).
    pub name: &'a str,
    /// The packages, pinned (`["gbnf==0.0.32"]`).
    pub pins: &'a [&'a str],
    /// More arguments for `pip install` (`["--no-deps"]`).
    pub pip_args: &'a [&'a str],
    /// Environment variables for `pip install`, for packages built from source
    /// (`[("CMAKE_ARGS", "-DTESTS=OFF")]`).
    pub build_env: &'a [(&'a str, &'a str)],
    /// The test that needs the venv, for the panics (`"the GBNF oracle test"`).
    pub needed_by: &'a str,
    /// What the pins are to that test, for the panics (`"the official Python SDK"`).
    pub what: &'a str,
}

impl PinnedVenv<'_> {
    /// The venv's `python`, the venv created under `target_tmpdir` (the test's
    /// `env!("CARGO_TARGET_TMPDIR")`, which Cargo sets for test targets only) and the pins
    /// installed on first use. Panics with what went wrong when Python or PyPI is out of reach:
    /// the test needing it must not pass without having asked the real implementations.
    pub fn python(&self, target_tmpdir: &Path) -> PathBuf {
        let pins = self.pins.join(" ");
        let venv =
            target_tmpdir.join(format!("{}-venv-{}", self.name, pins.replace([' ', '='], "-")));
        let python = venv.join("bin").join("python");
        install_once(&venv, || self.install(&venv, &python, &pins));
        python
    }

    fn install(&self, venv: &Path, python: &Path, pins: &str) {
        let needed_by = self.needed_by;
        let created = Command::new("python3").args(["-m", "venv"]).arg(venv).output();
        match created {
            Ok(output) if output.status.success() => {}
            Ok(output) => panic!(
                "`python3 -m venv {}` failed; {needed_by} needs python3 with the venv module:\n{}",
                venv.display(),
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(error) => {
                panic!("python3 is needed for {needed_by} and could not be run: {error}")
            }
        }
        let installed = Command::new(python)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
            .args(self.pip_args)
            .envs(self.build_env.iter().copied())
            .args(self.pins)
            .output()
            .expect("the venv's python runs");
        assert!(
            installed.status.success(),
            "`pip install {pins}` failed (is PyPI reachable?); {needed_by} cannot run without {}:\n{}",
            self.what,
            String::from_utf8_lossy(&installed.stderr)
        );
    }
}

/// A directory under `target_tmpdir` with the npm `package` (pinned: `name@version`)
/// installed by the machine's npm, created on first use and reused after. Panics with what went
/// wrong when npm or its registry is out of reach: `needed_by` must not pass without it.
pub fn npm_package(
    target_tmpdir: &Path,
    dir_name: &str,
    package: &str,
    needed_by: &str,
) -> PathBuf {
    let dir = target_tmpdir.join(dir_name);
    install_once(&dir, || {
        std::fs::create_dir_all(&dir).expect("the package's directory can be created");
        let installed = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg(package)
            .output();
        match installed {
            Ok(output) if output.status.success() => {}
            Ok(output) => panic!(
                "`npm install {package}` failed (is the npm registry reachable?); {needed_by} \
                 cannot run without it:\n{}",
                String::from_utf8_lossy(&output.stderr)
            ),
            Err(error) => {
                panic!(
                    "npm (Node 20 or later) is needed for {needed_by} and could not be run: {error}"
                )
            }
        }
    });
    dir
}
