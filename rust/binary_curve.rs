//! Per-label binary metrics (average precision, ROC AUC, curves).
