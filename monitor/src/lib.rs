//! Metric sampler (work in progress).
