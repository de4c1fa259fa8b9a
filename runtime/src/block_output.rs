//! What both trace writers share: the destination, written in blocks of
//! whole records, and the counts of events written, pending and lost.

use std::io::{self, Write};

use crate::decode::Misuse;
use crate::site::Site;
use crate::writer::report_misuse;

/// A writer's destination and its event counts.
pub struct BlockOutput<W: Write> {
    dest: W,
    error: Option<io::Error>,
    /// Neither finished nor failed: one flag for the writers' per-event
    /// test.
    open: bool,
    /// Set once the trace is complete.
    pub(crate) finished: bool,
    /// Events formatted (and not lost).
    pub(crate) written: u64,
    /// `written` when the last block was handed to the destination: the
    /// events above it are in the writer's buffer (one counter to bump
    /// per event rather than two).
    handed: u64,
    /// Events that never reach the destination.
    pub(crate) lost: u64,
    bytes: u64,
    /// Kinds of misuse already reported.
    reported: [bool; 4],
}

impl<W: Write> BlockOutput<W> {
    /// Counts from zero for `dest`.
    pub fn new(dest: W) -> BlockOutput<W> {
        BlockOutput {
            dest,
            error: None,
            open: true,
            finished: false,
            written: 0,
            handed: 0,
            lost: 0,
            bytes: 0,
            reported: [false; 4],
        }
    }

    /// Bytes handed to the destination so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    /// Events written so far.
    pub fn events_written(&self) -> u64 {
        self.written
    }

    /// Events that did not reach the destination: handed over after
    /// `finish` or after an I/O error, cut off by the error, or exits
    /// without a matching enter. Counted as events, never as lines,
    /// packets or bytes.
    pub fn events_lost(&self) -> u64 {
        self.lost
    }

    /// The destination, for tests that write into a `Vec<u8>`.
    pub fn into_inner(self) -> W {
        self.dest
    }

    /// True while events are still written (not finished, no I/O error).
    #[inline(always)]
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// True once writing failed (the failure was reported on stderr).
    pub fn has_failed(&self) -> bool {
        self.error.is_some()
    }

    /// One more event formatted into the writer's buffer.
    #[inline(always)]
    pub(crate) fn formatted(&mut self) {
        self.written += 1;
    }

    /// `n` more events formatted into the writer's buffer.
    #[inline(always)]
    pub(crate) fn formatted_n(&mut self, n: u64) {
        self.written += n;
    }

    /// Hands `block` to the destination. On an error (a full disk) the
    /// pending events that `reached(block, bytes_done)` does not find whole
    /// in the bytes written are counted as lost; those it finds stay
    /// counted as written.
    pub(crate) fn write_block(
        &mut self,
        block: &[u8],
        reached: fn(&[u8], usize) -> u64,
    ) -> io::Result<()> {
        let mut done = 0;
        let result = loop {
            if done == block.len() {
                break Ok(());
            }
            match self.dest.write(&block[done..]) {
                Ok(0) => break Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        self.bytes += done as u64;
        if result.is_err() {
            let pending = self.written - self.handed;
            let cut = pending.saturating_sub(reached(block, done));
            self.lost += cut;
            self.written -= cut.min(self.written);
        }
        self.handed = self.written;
        result
    }

    /// Recorded events broke a pointcut rule: an exit without an enter is
    /// counted as lost; each kind is reported once.
    pub(crate) fn misuse(&mut self, what: Misuse, site: &Site) {
        if what == Misuse::ExitWithoutEnter {
            self.lost += 1;
        }
        report_misuse(&mut self.reported, what, site);
    }

    /// Says on stderr that writing failed; nothing is written any more.
    pub(crate) fn fail(&mut self, e: io::Error) {
        crate::shield::stderr_line(format_args!(
            "perfflow: cannot write the trace: {e}; the events not written are counted as \
             dropped and the program runs on"
        ));
        self.error = Some(e);
        self.open = false;
    }

    /// Completes the trace: marks it finished and returns the write error
    /// that stopped it, if one did (`Ok(false)`: already finished).
    pub(crate) fn start_finish(&mut self) -> io::Result<bool> {
        if self.finished {
            return Ok(false);
        }
        self.finished = true;
        self.open = false;
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(true),
        }
    }

    /// Flushes the destination.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.dest.flush()
    }
}
