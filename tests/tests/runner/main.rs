//! The runner layer: `ToolRunner::exec` and what surrounds it. Every fault and its error code
//! (`pipeline`), panics, deadlines and credentials (`faults`), hooks and nested calls (`hooks`), the subject and graph ids (`identity`),
//! approvals (`approvals`), arguments in the other spelling (`case_tolerance`), start and result events paired (`events_paired`), result budgets
//! (`result_limits`, also run with `--features image` in the `features` binary), every output type end to end
//! (`output_shapes`), partial results of a call cut off (`partial_results`), properties over any input (`properties`), per-run tool sets (`tool_sets`)
//! BM25 tool selection over a large catalog (`selection`) and against stuffed descriptions
//! (`selection_hostile`), hybrid selection (`selection_hybrid`; with a real model, `selection_local` in the `features` binary), policy entries that would allow nothing (`policy_patterns`), and the unit-test harness
//! `tool_runtime::testing` (`testing_harness`), and typed stubs for code mode (`stubs`).
//!
//! One test binary, a module per behaviour.

mod approvals;
mod case_tolerance;
mod events_paired;
mod faults;
mod hand_written;
mod hooks;
mod identity;
mod output_shapes;
mod partial_results;
mod pipeline;
mod policy_patterns;
mod properties;
mod result_limits;
mod selection;
mod selection_hostile;
mod selection_hybrid;
mod stubs;
mod testing_harness;
mod tool_sets;
