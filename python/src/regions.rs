//! Regions open across a `yield` of a traced generator.
//!
//! Each resumption of a traced generator is a span on the thread that
//! resumes it ([`crate::Resumptions`]); between two resumptions the
//! generator's frame is suspended and the thread runs its consumer. A
//! `with perfflow.region(...)` block in the generator that is open at a
//! `yield` therefore cannot be one slice: it would overlap the resumption
//! spans without nesting in them (and the runtime, which closes a slice's
//! inner slices at its exit, would end the region at the first `yield` and
//! drop its real exit). Instead the region is one slice inside each
//! resumption that runs its code:
//!
//! 1. every region entered on a thread is pushed on that thread's stack of
//!    open regions, and popped by its exit;
//! 2. when a resumption ends (the generator yields), the regions it left
//!    open above the stack's height at its start end there, innermost
//!    first, as a return, and are kept, outermost first, by the generator;
//! 3. when the generator is resumed (on any thread), they begin again,
//!    outermost first, inside the new resumption's span, and are pushed on
//!    that thread's stack;
//! 4. the block's own exit ends the last slice, with the block's outcome
//!    (`raised` when an exception leaves it).
//!
//! A region with a flow has its flows once, as if it were not split: its
//! first slice is of its own site (arrivals at its begin), later ones of a
//! twin site without a flow, and its departures leave where its first
//! slice ends.
//!
//! A generator finalised without its wrapper (the garbage collector closing
//! it directly) exits its suspended regions outside any resumption: their
//! last slice ended at the suspension, so nothing more is recorded.
//!
//! The stack is per thread, and a generator's suspended regions are taken
//! under an uncontended lock only by resumptions that have some (Python
//! never runs one generator on two threads at once): a resumption that
//! suspends nothing costs one thread-local read before and after.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use pyo3::prelude::*;

use crate::runtime::Api;
use crate::Region;

/// A region open on a thread, as its stack holds it.
pub(crate) struct Open {
    region: Py<Region>,
    /// This slice is of the region's twin site without a flow (a slice
    /// after the first of a region with a flow).
    twin: bool,
}

thread_local! {
    /// The regions open on this thread, innermost last.
    static OPEN: RefCell<Vec<Open>> = const { RefCell::new(Vec::new()) };
}

/// What a region keeps about its splitting.
#[derive(Default)]
pub(crate) struct Splits {
    /// Slices of this region ended at a `yield`, not begun again yet.
    suspended: AtomicUsize,
}

/// The regions a traced generator left open at its last `yield`,
/// outermost first.
#[derive(Default)]
pub(crate) struct Suspended {
    any: AtomicBool,
    regions: Mutex<Vec<Open>>,
}

/// Pushes `region`, just begun, on the thread's stack.
pub(crate) fn entered(region: &Bound<'_, Region>) {
    let open = Open {
        region: region.clone().unbind(),
        twin: false,
    };
    OPEN.with(|stack| stack.borrow_mut().push(open));
}

/// How the exit of `region` is to be recorded.
pub(crate) enum Exit {
    /// End the slice: of the twin site when `twin`.
    End { twin: bool },
    /// Nothing: the last slice ended at a suspension.
    Nothing,
}

/// Pops `region` from the thread's stack for its exit.
pub(crate) fn exiting(region: &Bound<'_, Region>) -> Exit {
    let ptr = region.as_ptr();
    let found = OPEN.with(|stack| {
        let mut stack = stack.borrow_mut();
        let at = stack.iter().rposition(|open| open.region.as_ptr() == ptr)?;
        Some(stack.remove(at).twin)
    });
    match found {
        Some(twin) => Exit::End { twin },
        None => {
            let splits = &region.get().splits;
            let suspended =
                splits
                    .suspended
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
            if suspended.is_ok() {
                Exit::Nothing
            } else {
                // Not entered on this thread: the runtime says so.
                Exit::End { twin: false }
            }
        }
    }
}

/// The height of the thread's stack, before a resumption: begins again the
/// regions `suspended` holds, on top of it.
pub(crate) fn resume(py: Python<'_>, api: &Api, suspended: &Suspended) -> usize {
    let height = OPEN.with(|stack| stack.borrow().len());
    if !suspended.any.load(Ordering::Relaxed) {
        return height;
    }
    let regions = std::mem::take(&mut *suspended.regions.lock().unwrap_or_else(|e| e.into_inner()));
    suspended.any.store(false, Ordering::Relaxed);
    let mut reopened = Vec::with_capacity(regions.len());
    for open in regions {
        let region = open.region.bind(py).get();
        let waiting =
            region
                .splits
                .suspended
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        // A region whose block was left meanwhile (a plain generator inside
        // this one, resumed elsewhere) stays ended.
        if waiting.is_ok() {
            region.begin(api, true);
            reopened.push(Open { twin: true, ..open });
        }
    }
    OPEN.with(|stack| stack.borrow_mut().extend(reopened));
    height
}

/// After a resumption that began at stack height `height`: ends the
/// regions left open above it, innermost first, and keeps them in
/// `suspended` for the next resumption.
pub(crate) fn suspend(py: Python<'_>, api: &Api, height: usize, suspended: &Suspended) {
    let left = OPEN.with(|stack| {
        let mut stack = stack.borrow_mut();
        (stack.len() > height).then(|| stack.split_off(height))
    });
    let Some(left) = left else { return };
    for open in left.iter().rev() {
        let region = open.region.bind(py).get();
        region.end(api, open.twin, false);
        region.splits.suspended.fetch_add(1, Ordering::Relaxed);
    }
    let mut regions = suspended.regions.lock().unwrap_or_else(|e| e.into_inner());
    regions.extend(left);
    suspended.any.store(true, Ordering::Relaxed);
}
