//! Turns one thread's raw records into trace events.
//!
//! The hot path stores only `(timestamp, site, enter|exit)`. Everything that
//! depends on the pointcut — which Chrome phase to write, whether an exit is
//! paired with an enter, which async id a slice gets — is decided here, on
//! the writer side, by a small per-thread state machine that survives from
//! one chunk of records to the next.
//!
//! Rules:
//! - `around`: enter → `B`, exit → `E`. An exit must close an open slice of
//!   the same site; slices opened above it that were never closed (a
//!   `longjmp` out of woven code) are closed at the same time. An exit with
//!   no open slice for its site is a misuse: it is dropped and reported.
//! - `before` / `after`: an instant at enter / at exit; the other half is
//!   ignored.
//! - `around_async`: enter → `b`, exit → `e`, paired through a per-thread
//!   stack of ids. Pairing across threads plugs in here later (the id will
//!   then come from a flow table instead of the stack).
//! - `before_async` / `after_async`: an async instant `n`.
//! - Slices still open when their thread exits or the trace is completed
//!   are ended at that moment ([`ThreadDecoder::close_open`]), so every
//!   `B` has its `E` even when `exit()` is called deep inside woven code.
//!
//! - Compact log format (`log-event=compact`): no `B`; when a slice ends, one
//!   `X` event at its begin time with its duration. The open-slice stack
//!   holds the begin times, so recursion and nested calls of the same
//!   function each get their own duration.

use crate::clock::Epoch;
use crate::event::{Kind, RawEvent};
use crate::site::{Pointcut, Site};
use crate::writer::Sink;

/// Chrome trace phase of an event, with the async id where there is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `B`
    Begin,
    /// `E`
    End,
    /// `i` with thread scope
    Instant,
    /// `b`
    AsyncBegin(u64),
    /// `e`
    AsyncEnd(u64),
    /// `n`
    AsyncInstant(u64),
    /// A whole slice as one `X` event (compact log format): the event's
    /// timestamp is the begin, this is the duration in nanoseconds.
    Complete(u64),
}

/// One decoded event, handed to a [`Sink`].
#[derive(Clone, Copy, Debug)]
pub struct TraceEvent<'a> {
    /// The site the event belongs to.
    pub site: &'a Site,
    /// Kernel thread id of the recording thread.
    pub tid: u32,
    /// Nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// What to write.
    pub phase: Phase,
}

/// Ways in which recorded events did not fit the pointcut rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misuse {
    /// An exit with no matching enter on the same thread.
    ExitWithoutEnter,
    /// An exit closed a slice that still had open slices above it.
    UnbalancedExit,
    /// A site whose `abi_version` this runtime does not know.
    UnknownSiteVersion,
}

/// Process-wide decoding state shared by all threads.
#[derive(Debug)]
pub struct DecodeContext {
    /// Converts monotonic stamps to epoch time.
    pub epoch: Epoch,
    /// `log-event=compact`: one `X` event per slice instead of `B` + `E`.
    pub compact: bool,
    next_async_id: u64,
}

impl DecodeContext {
    /// A context with the given clock pairing; async ids start at 1.
    pub fn new(epoch: Epoch) -> DecodeContext {
        DecodeContext {
            epoch,
            compact: false,
            next_async_id: 1,
        }
    }

    fn fresh_id(&mut self) -> u64 {
        let id = self.next_async_id;
        self.next_async_id += 1;
        id
    }
}

/// Ends one `around` slice: an `E` at `end_ns`, or in compact mode one `X`
/// at `begin_ns` lasting until `end_ns`.
fn end_slice<S: Sink + ?Sized>(
    site: &Site,
    tid: u32,
    begin_ns: u64,
    end_ns: u64,
    compact: bool,
    sink: &mut S,
) {
    let (ts_ns, phase) = if compact {
        (begin_ns, Phase::Complete(end_ns.saturating_sub(begin_ns)))
    } else {
        (end_ns, Phase::End)
    };
    sink.event(&TraceEvent {
        site,
        tid,
        ts_ns,
        phase,
    });
}

/// Decoding state of one thread.
#[derive(Debug)]
pub struct ThreadDecoder {
    tid: u32,
    /// Open `around` slices: site and begin time (epoch ns).
    open: Vec<(*const Site, u64)>,
    open_async: Vec<(*const Site, u64)>,
}

// SAFETY: the site pointers are only compared and, during `decode`,
// dereferenced under the caller's guarantee that sites are immutable and
// live for the whole program; they carry no thread affinity.
unsafe impl Send for ThreadDecoder {}

impl ThreadDecoder {
    /// A decoder for the thread with kernel id `tid`.
    pub fn new(tid: u32) -> ThreadDecoder {
        ThreadDecoder {
            tid,
            open: Vec::new(),
            open_async: Vec::new(),
        }
    }

    /// The thread's id changes in a forked child (its only thread).
    pub fn set_tid(&mut self, tid: u32) {
        self.tid = tid;
    }

    /// The thread this decoder belongs to.
    pub fn tid(&self) -> u32 {
        self.tid
    }

    /// In a forked child: the slices this thread was inside of when the
    /// process forked are the child's too. They begin again at the fork
    /// (monotonic `fork_ns`) in the child's own trace.
    pub fn reopen_after_fork<S: Sink + ?Sized>(
        &mut self,
        fork_ns: u64,
        cx: &mut DecodeContext,
        sink: &mut S,
    ) {
        let ts_ns = cx.epoch.to_epoch_ns(fork_ns);
        for (site, begin_ns) in &mut self.open {
            *begin_ns = ts_ns;
            if !cx.compact {
                // SAFETY: pushed by `decode`, whose caller vouched for the site.
                let site: &Site = unsafe { &**site };
                sink.event(&TraceEvent {
                    site,
                    tid: self.tid,
                    ts_ns,
                    phase: Phase::Begin,
                });
            }
        }
        for &(site, id) in &self.open_async {
            // SAFETY: as above.
            let site: &Site = unsafe { &*site };
            sink.event(&TraceEvent {
                site,
                tid: self.tid,
                ts_ns,
                phase: Phase::AsyncBegin(id),
            });
        }
    }

    /// Number of `around` slices still open.
    pub fn open_slices(&self) -> usize {
        self.open.len()
    }

    /// Ends every slice still open on this thread at monotonic time
    /// `mono_ns`, innermost first: the thread or the process ended inside
    /// them (for example `exit()` called from a woven function, where only
    /// the innermost function gets its exit event).
    pub fn close_open<S: Sink + ?Sized>(
        &mut self,
        mono_ns: u64,
        cx: &mut DecodeContext,
        sink: &mut S,
    ) {
        let ts_ns = cx.epoch.to_epoch_ns(mono_ns);
        while let Some((site, begin_ns)) = self.open.pop() {
            // SAFETY: pushed by `decode`, whose caller vouched for the site.
            let site: &Site = unsafe { &*site };
            end_slice(site, self.tid, begin_ns, ts_ns, cx.compact, sink);
        }
        while let Some((site, id)) = self.open_async.pop() {
            // SAFETY: as above.
            let site: &Site = unsafe { &*site };
            sink.event(&TraceEvent {
                site,
                tid: self.tid,
                ts_ns,
                phase: Phase::AsyncEnd(id),
            });
        }
    }

    /// Decodes `records`, in order, into `sink`.
    ///
    /// # Safety
    /// Every record's site address must point to a live [`Site`] (the C ABI
    /// contract: sites are constants that outlive the program's events).
    pub unsafe fn decode<S: Sink + ?Sized>(
        &mut self,
        records: &[RawEvent],
        cx: &mut DecodeContext,
        sink: &mut S,
    ) {
        for rec in records {
            let Some(kind) = rec.kind() else { continue };
            let site_ptr = rec.site();
            if site_ptr.is_null() {
                continue;
            }
            // SAFETY: guaranteed by the caller.
            let site: &Site = unsafe { &*site_ptr };
            let ts_ns = cx.epoch.to_epoch_ns(rec.ts_ns);
            let tid = self.tid;
            let emit = |sink: &mut S, phase: Phase| {
                sink.event(&TraceEvent {
                    site,
                    tid,
                    ts_ns,
                    phase,
                })
            };
            match (site.pointcut(), kind) {
                (Pointcut::Around, Kind::Enter) => {
                    self.open.push((site_ptr, ts_ns));
                    if !cx.compact {
                        emit(sink, Phase::Begin);
                    }
                }
                (Pointcut::Around, Kind::Exit) => {
                    match self.open.iter().rposition(|&(p, _)| p == site_ptr) {
                        Some(at) => {
                            if at + 1 != self.open.len() {
                                sink.misuse(Misuse::UnbalancedExit, site);
                            }
                            // Slices opened above this one and never closed
                            // (a longjmp out of them) end here too.
                            while let Some((inner, begin_ns)) = self.open.pop() {
                                // SAFETY: pushed from a record above, so it
                                // satisfies the same contract.
                                let inner: &Site = unsafe { &*inner };
                                end_slice(inner, tid, begin_ns, ts_ns, cx.compact, sink);
                                if self.open.len() == at {
                                    break;
                                }
                            }
                        }
                        None => sink.misuse(Misuse::ExitWithoutEnter, site),
                    }
                }
                (Pointcut::Before, Kind::Enter) | (Pointcut::After, Kind::Exit) => {
                    emit(sink, Phase::Instant)
                }
                (Pointcut::AroundAsync, Kind::Enter) => {
                    let id = cx.fresh_id();
                    self.open_async.push((site_ptr, id));
                    emit(sink, Phase::AsyncBegin(id));
                }
                (Pointcut::AroundAsync, Kind::Exit) => {
                    match self.open_async.iter().rposition(|&(p, _)| p == site_ptr) {
                        Some(at) => {
                            let (_, id) = self.open_async.remove(at);
                            emit(sink, Phase::AsyncEnd(id));
                        }
                        None => sink.misuse(Misuse::ExitWithoutEnter, site),
                    }
                }
                (Pointcut::BeforeAsync, Kind::Enter) | (Pointcut::AfterAsync, Kind::Exit) => {
                    let id = cx.fresh_id();
                    emit(sink, Phase::AsyncInstant(id));
                }
                // The other half of a one-sided pointcut: nothing to write.
                (Pointcut::Before | Pointcut::BeforeAsync, Kind::Exit)
                | (Pointcut::After | Pointcut::AfterAsync, Kind::Enter) => {}
            }
        }
    }
}
