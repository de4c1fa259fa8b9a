//! Trace reader (work in progress).
