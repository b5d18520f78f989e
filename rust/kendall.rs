//! Kendall's tau with SciPy's semantics.
