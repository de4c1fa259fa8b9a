//! Weaver (work in progress).
