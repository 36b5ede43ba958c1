//! A counting global allocator (feature `image` only): the peak of the bytes live on the
//! threads one test measures (the thread that polls its call and its runtime's blocking
//! threads), and the largest single allocation made on the polling thread. Other tests of the
//! binary run on threads it does not count.
//!
//! Bytes allocated before a measurement and freed during it would lower the count, so a
//! measured call's inputs stay alive until it ends (the catalog holds them). Bytes allocated on
//! a measured thread and freed on another are never taken off: the count can only be high.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering};

/// Not measured.
const NONE: u8 = 0;
/// The thread that polls the measured call.
const POLLING: u8 = 1;
/// A blocking thread of the measured call's runtime.
const BLOCKING: u8 = 2;

thread_local! {
    static ROLE: Cell<u8> = const { Cell::new(NONE) };
}

static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
static LARGEST_POLLING: AtomicUsize = AtomicUsize::new(0);
/// One measurement at a time.
static MEASURING: Mutex<()> = Mutex::new(());

struct Counting;

#[global_allocator]
static COUNTING: Counting = Counting;

fn role() -> u8 {
    ROLE.try_with(Cell::get).unwrap_or(NONE)
}

fn allocated(size: usize) {
    let role = role();
    if role == NONE {
        return;
    }
    let size = isize::try_from(size).unwrap_or(isize::MAX);
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    PEAK.fetch_max(live, Ordering::Relaxed);
    if role == POLLING {
        LARGEST_POLLING.fetch_max(size.unsigned_abs(), Ordering::Relaxed);
    }
}

fn freed(size: usize) {
    if role() != NONE {
        LIVE.fetch_sub(isize::try_from(size).unwrap_or(isize::MAX), Ordering::Relaxed);
    }
}

// SAFETY: every call is passed to the system allocator unchanged; the counting touches only
// atomics and a constant-initialised thread-local without a destructor (`try_with`: never
// during the thread's teardown).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            allocated(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            allocated(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) };
        freed(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            freed(layout.size());
            allocated(new_size);
        }
        moved
    }
}

/// What a measured call allocated.
#[derive(Debug)]
pub struct Measured {
    /// The most bytes live at once on the measured threads, counted from 0 at the start.
    pub peak: usize,
    /// The largest single allocation on the thread that polled the call.
    pub largest_polling: usize,
}

/// Runs `call` to its end on a runtime of its own (one thread polling, blocking threads
/// beside it), counting what it allocates.
pub fn measure<F: Future>(call: impl FnOnce() -> F) -> (F::Output, Measured) {
    let _one = MEASURING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_start(|| ROLE.set(BLOCKING))
        .build()
        .unwrap();
    LIVE.store(0, Ordering::Relaxed);
    PEAK.store(0, Ordering::Relaxed);
    LARGEST_POLLING.store(0, Ordering::Relaxed);
    ROLE.set(POLLING);
    let output = runtime.block_on(call());
    ROLE.set(NONE);
    let measured = Measured {
        peak: PEAK.load(Ordering::Relaxed).max(0).unsigned_abs(),
        largest_polling: LARGEST_POLLING.load(Ordering::Relaxed),
    };
    // Blocking threads still at work (a resize past its deadline) finish here.
    drop(runtime);
    (output, measured)
}
