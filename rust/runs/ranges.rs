//! Range numbers of scores for range partitions: a range is `bounds[g-1] <= key <
//! bounds[g]` over the order keys of `score.rs`, so equal scores always share a
//! range. NumPy's `searchsorted` of the keys does the same at 35-60 ns a score on
//! random input; this binary search over the (few hundred) bounds, fused with the
//! key, costs a few.

use crate::score::Score;

/// For each score, how many of `bounds` (ascending order keys) are at most its key:
/// its range number, in `0..=bounds.len()`.
pub fn range_numbers<S: Score>(scores: &[S], bounds: &[u64]) -> Vec<u32> {
    scores
        .iter()
        .map(|s| {
            let k = s.key();
            bounds.partition_point(|&b| b <= k) as u32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_counting_the_bounds_at_most_each_key() {
        let scores = [-1.0f64, -0.0, 0.0, 0.25, 0.5, 0.5, 0.75, 1.0, 2.0];
        let bounds: Vec<u64> = [0.0f64, 0.5, 1.0].iter().map(|s| s.key()).collect();
        let got = range_numbers(&scores, &bounds);
        let want: Vec<u32> = scores
            .iter()
            .map(|s| bounds.iter().filter(|&&b| b <= s.key()).count() as u32)
            .collect();
        assert_eq!(got, want);
        assert_eq!(got, vec![0, 1, 1, 1, 2, 2, 2, 3, 3]);
        assert_eq!(range_numbers(&scores, &[]), vec![0; scores.len()]);
    }
}
