//! The benchmarks' own checks, in one test binary: their fixtures do what they claim, and what
//! the allocation benchmarks count (`allocation-counter` installs a counting global allocator
//! in this binary; it counts per thread, so tests running side by side do not see each other's
//! allocations).

mod allocations;
mod exec_result_allocations;
mod fixtures;
mod result_allocations;
