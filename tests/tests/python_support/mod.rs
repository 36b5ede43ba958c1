//! Pinned Python packages for the suites that check us against implementations written in
//! Python: one venv under the target directory per set of pins, created on first use and
//! reused after.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A venv holding exact versions of some PyPI packages, and who needs it.
#[derive(Debug, Clone, Copy)]
pub struct PinnedVenv<'a> {
    /// Starts the venv's directory name, which the pins complete (`gbnf`).
    pub name: &'a str,
    /// The packages, pinned (`["gbnf==0.0.32"]`).
    pub pins: &'a [&'a str],
    /// More arguments for `pip install` (`["--no-deps"]`).
    pub pip_args: &'a [&'a str],
    /// The test that needs the venv, for the panics (`"the GBNF oracle test"`).
    pub needed_by: &'a str,
    /// What the pins are to that test, for the panics (`"the official Python SDK"`).
    pub what: &'a str,
}

impl PinnedVenv<'_> {
    /// The venv's `python`, the venv created and the pins installed on first use. Panics with
    /// what went wrong when Python or PyPI is out of reach: the test needing it must not pass
    /// without having asked the real implementations.
    pub fn python(&self) -> PathBuf {
        let pins = self.pins.join(" ");
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "{}-venv-{}",
            self.name,
            pins.replace([' ', '='], "-")
        ));
        let python = venv.join("bin").join("python");
        let marker = venv.join(".installed");
        if marker.exists() && python.exists() {
            return python;
        }
        let needed_by = self.needed_by;
        let created = Command::new("python3").args(["-m", "venv"]).arg(&venv).output();
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
        let installed = Command::new(&python)
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
            .args(self.pip_args)
            .args(self.pins)
            .output()
            .expect("the venv's python runs");
        assert!(
            installed.status.success(),
            "`pip install {pins}` failed (is PyPI reachable?); {needed_by} cannot run without {}:\n{}",
            self.what,
            String::from_utf8_lossy(&installed.stderr)
        );
        std::fs::write(&marker, &pins).expect("the venv marker can be written");
        python
    }
}
