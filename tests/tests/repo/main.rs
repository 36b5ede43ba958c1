//! Checks of the source tree rather than of one layer: the layout rule for provider wire
//! formats (`layout`), only the runner running tools (`one_path`) and the committed fuzz corpus replayed through the fuzz targets' checks
//! (`fuzz_corpus`), and what each feature builds (`features`).
//!
//! One test binary, a module per behaviour.

mod features;
mod fuzz_corpus;
mod layout;
mod one_path;
