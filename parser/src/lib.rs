//! Annotation parser (work in progress).
