//! Mergeable exact states of average precision and ROC AUC: per binary problem, the
//! *runs* of distinct scores in descending order, each with the (weighted) positives
//! and negatives scored there.
//!
//! Runs hold everything scikit-learn's curve reads: its thresholds are the distinct
//! scores of the rows with non-zero weight, and its `tps`/`fps` are the cumulative
//! sums of the runs' weights. So two sets of rows merge by merging their runs (keys
//! ascending in both, equal keys added), whatever the split, and AP/ROC AUC is one
//! pass over the merged runs ([`Reducer`]). The state is O(distinct scores): a few
//! hundred entries for LLM confidences or quantised outputs, about one per row for
//! continuous scores.
//!
//! Keys are the order keys of `score.rs` (`-0.0` ties `0.0`; float32 keys are taken
//! in float32), so runs of different score dtypes must not be merged (the Python
//! layer keeps the dtype beside the runs). A run exists when at least one row with
//! non-zero weight has its score, even if the weights cancel (negative weights):
//! that is a threshold of scikit-learn's curve too.
//!
//! [`Reducer`] consumes runs in descending key order in any number of pieces, with
//! O(1) state: running `tp`/`fp` and unnormalised AP/AUC sums, normalised at the end
//! by the totals. That is how a label too large for one process is reduced: range
//! partitions in score order, each range's runs fed in order (the template of
//! Spark's exact `BinaryClassificationMetrics`).

mod build;
mod ranges;
mod reduce;
#[cfg(test)]
mod tests;

pub use build::{build_runs, LabelRuns};
pub use ranges::range_numbers;
pub use reduce::{ap_auc, micro_ap_auc, Reducer};

use crate::error::{MetricError, Result};

/// Runs of one binary problem: strictly descending `keys`, and per key the summed
/// weight of the positive (`pos`) and negative (`neg`) rows with that score.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Runs {
    pub keys: Vec<u64>,
    pub pos: Vec<f64>,
    pub neg: Vec<f64>,
}

/// A borrowed view of [`Runs`] (e.g. three NumPy arrays).
#[derive(Debug, Clone, Copy)]
pub struct RunsRef<'a> {
    pub keys: &'a [u64],
    pub pos: &'a [f64],
    pub neg: &'a [f64],
}

impl Runs {
    /// Empty runs with room for `n` entries.
    pub fn with_capacity(n: usize) -> Self {
        Runs {
            keys: Vec::with_capacity(n),
            pos: Vec::with_capacity(n),
            neg: Vec::with_capacity(n),
        }
    }

    /// Number of distinct scores.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no row with non-zero weight was seen.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The borrowed view.
    pub fn view(&self) -> RunsRef<'_> {
        RunsRef {
            keys: &self.keys,
            pos: &self.pos,
            neg: &self.neg,
        }
    }

    /// Give back the capacity when less than half of it is used.
    fn trim(&mut self) {
        if self.keys.len() < self.keys.capacity() / 2 {
            self.keys.shrink_to_fit();
            self.pos.shrink_to_fit();
            self.neg.shrink_to_fit();
        }
    }

    #[inline]
    fn push(&mut self, key: u64, pos: f64, neg: f64) {
        self.keys.push(key);
        self.pos.push(pos);
        self.neg.push(neg);
    }
}

impl<'a> RunsRef<'a> {
    /// Check what every function taking runs relies on: equal lengths and strictly
    /// descending keys. Runs that come from outside (arrays a caller built or
    /// loaded) are checked once here.
    pub fn checked(keys: &'a [u64], pos: &'a [f64], neg: &'a [f64]) -> Result<Self> {
        if pos.len() != keys.len() || neg.len() != keys.len() {
            return Err(MetricError::shape(format!(
                "runs need keys, positive and negative weights of one length; got {}, {} and {}",
                keys.len(),
                pos.len(),
                neg.len()
            )));
        }
        if keys.windows(2).any(|w| w[0] <= w[1]) {
            return Err(MetricError::value(
                "run keys must be strictly descending (distinct scores, highest first)",
            ));
        }
        Ok(RunsRef { keys, pos, neg })
    }

    /// Number of distinct scores.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are no runs.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// Merge two runs: one pass, equal keys added (`a`'s weight first).
pub fn merge(a: RunsRef<'_>, b: RunsRef<'_>) -> Runs {
    let (na, nb) = (a.len(), b.len());
    let mut out = Runs::with_capacity(na + nb);
    let (mut i, mut j) = (0, 0);
    while i < na && j < nb {
        let (ka, kb) = (a.keys[i], b.keys[j]);
        if ka > kb {
            out.push(ka, a.pos[i], a.neg[i]);
            i += 1;
        } else if kb > ka {
            out.push(kb, b.pos[j], b.neg[j]);
            j += 1;
        } else {
            out.push(ka, a.pos[i] + b.pos[j], a.neg[i] + b.neg[j]);
            i += 1;
            j += 1;
        }
    }
    for t in i..na {
        out.push(a.keys[t], a.pos[t], a.neg[t]);
    }
    for t in j..nb {
        out.push(b.keys[t], b.pos[t], b.neg[t]);
    }
    out
}

/// Merge any number of runs by a balanced tree of pairwise merges (each entry is
/// moved about log2(parts) times).
pub fn merge_many(parts: &[RunsRef<'_>]) -> Runs {
    match parts.len() {
        0 => Runs::default(),
        1 => {
            let p = parts[0];
            Runs {
                keys: p.keys.to_vec(),
                pos: p.pos.to_vec(),
                neg: p.neg.to_vec(),
            }
        }
        2 => merge(parts[0], parts[1]),
        n => {
            let (l, r) = parts.split_at(n / 2);
            let (a, b) = (merge_many(l), merge_many(r));
            merge(a.view(), b.view())
        }
    }
}
