//! Runtime (work in progress).
