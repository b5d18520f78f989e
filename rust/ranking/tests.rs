use super::*;
use ndarray::{array, Array1, Array2};

fn seq() -> Parallelism {
    Parallelism::sequential()
}

fn rows<'a, R: Relevance, S: Score>(t: &'a Array2<R>, s: &'a Array2<S>) -> Rows<'a, R, S> {
    Rows {
        y_true: t.view(),
        y_score: s.view(),
        mask: None,
        sample_weight: None,
    }
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

#[test]
fn ranking_loss_ties_are_full_errors() {
    // sklearn test_ranking_loss_ties_handling
    let t = array![[true, false, false]];
    for (s, want) in [
        (array![[0.5, 0.5, 0.5]], 1.0),
        (array![[0.25, 0.5, 0.5]], 1.0),
        (array![[0.5, 0.5, 0.25]], 0.5),
        (array![[0.5, 0.25, 0.25]], 0.0),
    ] {
        close(label_ranking_loss_sum(&rows(&t, &s), &seq()).unwrap(), want);
    }
    let t = array![[true, false]];
    let s = array![[0.5f32, 0.5]];
    close(label_ranking_loss_sum(&rows(&t, &s), &seq()).unwrap(), 1.0);
    // -0.0 ties with 0.0
    let s = array![[0.0, -0.0]];
    close(label_ranking_loss_sum(&rows(&t, &s), &seq()).unwrap(), 1.0);
}

#[test]
fn ranking_loss_docstring_and_degenerate_rows() {
    let t = array![
        [true, false, false],
        [false, false, true],
        [false, false, false]
    ];
    let s = array![[0.75, 0.5, 1.0], [1.0, 0.2, 0.1], [0.3, 0.2, 0.1]];
    // 0.5 + 1.0 + 0 (no relevant)
    close(label_ranking_loss_sum(&rows(&t, &s), &seq()).unwrap(), 1.5);
}

#[test]
fn lrap_max_rank_for_ties() {
    let t = array![[true, false, true]];
    let s = array![[0.5, 0.5, 0.2]];
    // relevant 0: 1/2; relevant 2: 2/3
    close(
        lrap_sum(&rows(&t, &s), &seq()).unwrap(),
        (0.5 + 2.0 / 3.0) / 2.0,
    );
    let t = array![[true, false, false], [false, false, true]];
    let s = array![[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]];
    close(lrap_sum(&rows(&t, &s), &seq()).unwrap(), 0.5 + 1.0 / 3.0);
    let t = array![[false, false], [true, true]];
    let s = array![[0.1, 0.2], [0.3, 0.3]];
    close(lrap_sum(&rows(&t, &s), &seq()).unwrap(), 2.0);
}

#[test]
fn coverage_ties_take_max_rank() {
    // sklearn test_coverage_tie_handling
    let t = array![[false, true]];
    for (s, want) in [
        (array![[0.0, 0.0]], 2.0),
        (array![[1.0, 0.0]], 2.0),
        (array![[1.0, 1.0]], 2.0),
        (array![[0.0, 1.0]], 1.0),
    ] {
        close(coverage_sum(&rows(&t, &s), &seq()).unwrap(), want);
    }
    let t = array![[false, false, false]];
    let s = array![[0.1, 0.2, 0.3]];
    close(coverage_sum(&rows(&t, &s), &seq()).unwrap(), 0.0);
}

#[test]
fn one_error_ties_and_empty_rows() {
    let t = array![
        [true, false, false],
        [false, false, false],
        [true, false, false]
    ];
    let s = array![[0.5, 0.5, 0.1], [0.3, 0.2, 0.1], [0.9, 0.2, 0.1]];
    // 1/2 + 1 + 0
    close(one_error_sum(&rows(&t, &s), &seq()).unwrap(), 1.5);
}

#[test]
fn dcg_tie_averaging_with_cutoff() {
    // sklearn docstring: y_true=[[10,0,0,1,5]], scores [[1,0,0,0,1]], k=1 -> 7.5
    let t = array![[10.0, 0.0, 0.0, 1.0, 5.0]];
    let s = array![[1.0, 0.0, 0.0, 0.0, 1.0]];
    let (d, c) = discounts(5, Some(1), 2.0);
    let disc = Discounts {
        discount: ndarray::ArrayView1::from(&d),
        cumsum: ndarray::ArrayView1::from(&c),
    };
    close(
        dcg_sum(&rows(&t, &s), &disc, false, false, &seq()).unwrap(),
        7.5,
    );
    close(
        dcg_sum(&rows(&t, &s), &disc, false, true, &seq()).unwrap(),
        0.75,
    );
    // ignore_ties: column 4 (gain 5) first
    close(
        dcg_sum(&rows(&t, &s), &disc, true, false, &seq()).unwrap(),
        5.0,
    );
    close(
        dcg_sum(&rows(&t, &s), &disc, true, true, &seq()).unwrap(),
        0.5,
    );
    // no ties, no k: 9.49...
    let s = array![[0.1, 0.2, 0.3, 4.0, 70.0]];
    let (d, c) = discounts(5, None, 2.0);
    let disc = Discounts {
        discount: ndarray::ArrayView1::from(&d),
        cumsum: ndarray::ArrayView1::from(&c),
    };
    let want = 5.0 + 1.0 / 3f64.log2() + 10.0 / 6f64.log2();
    close(
        dcg_sum(&rows(&t, &s), &disc, false, false, &seq()).unwrap(),
        want,
    );
    close(
        dcg_sum(&rows(&t, &s), &disc, true, false, &seq()).unwrap(),
        want,
    );
}

#[test]
fn ndcg_zero_ideal_gives_zero() {
    let t = array![[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]];
    let (d, c) = discounts(3, None, 2.0);
    let disc = Discounts {
        discount: ndarray::ArrayView1::from(&d),
        cumsum: ndarray::ArrayView1::from(&c),
    };
    close(
        dcg_sum(&rows(&t, &t), &disc, false, true, &seq()).unwrap(),
        1.0,
    );
}

#[test]
fn mask_drops_unknown_labels_and_weights_apply() {
    let t = array![[true, false, true, false]];
    let s = array![[0.9, 0.8, 0.1, 0.95]];
    let m = array![[true, true, true, false]];
    let w = array![2.0];
    let r = Rows {
        y_true: t.view(),
        y_score: s.view(),
        mask: Some(m.view()),
        sample_weight: Some(w.view()),
    };
    // known: rel 0.9, irr 0.8, rel 0.1 -> one bad pair of 2
    close(label_ranking_loss_sum(&r, &seq()).unwrap(), 2.0 * 0.5);
    close(coverage_sum(&r, &seq()).unwrap(), 2.0 * 3.0);
    close(one_error_sum(&r, &seq()).unwrap(), 0.0);
    close(lrap_sum(&r, &seq()).unwrap(), 2.0 * (1.0 + 2.0 / 3.0) / 2.0);
}

#[test]
fn shape_and_nan_errors() {
    let t = array![[true, false]];
    let s = array![[0.1, 0.2, 0.3]];
    assert!(label_ranking_loss_sum(&rows(&t, &s), &seq()).is_err());
    let s = array![[0.1, f64::NAN]];
    assert!(lrap_sum(&rows(&t, &s), &seq()).is_err());
}

#[test]
fn large_k_sort_path_matches_insertion() {
    // K = 100 uses the library sort; compare against pair counting.
    let k = 100;
    let t = Array2::from_shape_fn((3, k), |(i, j)| (i + j * 7) % 3 == 0);
    let s = Array2::from_shape_fn((3, k), |(i, j)| ((i * 31 + j * 17) % 11) as f64);
    let mut want = 0.0;
    for i in 0..3 {
        let (mut bad, mut np) = (0u64, 0u64);
        for p in 0..k {
            if t[[i, p]] {
                np += 1;
                for n in 0..k {
                    if !t[[i, n]] && s[[i, p]] <= s[[i, n]] {
                        bad += 1;
                    }
                }
            }
        }
        want += bad as f64 / (np * (k as u64 - np)) as f64;
    }
    close(label_ranking_loss_sum(&rows(&t, &s), &seq()).unwrap(), want);
}

/// Run `f` once on the direct (counting) paths and once forcing the sort paths.
fn both_paths(f: impl Fn() -> f64) -> (f64, f64) {
    let direct = f();
    FORCE_SORT.with(|x| x.set(true));
    let sorted = f();
    FORCE_SORT.with(|x| x.set(false));
    (direct, sorted)
}

#[test]
fn direct_and_sorted_paths_agree() {
    // tie-heavy rows, graded gains incl. negatives, a mask
    let (n, k) = (200, 9);
    let t = Array2::from_shape_fn((n, k), |(i, j)| (i * 7 + j * 3) % 5 < 1 + i % 4);
    let g = Array2::from_shape_fn((n, k), |(i, j)| {
        if (i + j) % 3 == 0 {
            ((i * j) % 7) as f64 - 2.0
        } else {
            0.0
        }
    });
    let s = Array2::from_shape_fn((n, k), |(i, j)| {
        ((i * 13 + j * 5) % 4) as f64 - 0.0 * j as f64
    });
    let m = Array2::from_shape_fn((n, k), |(i, j)| (i + 2 * j) % 7 != 0);
    for mask in [None, Some(m.view())] {
        let r = Rows {
            y_true: t.view(),
            y_score: s.view(),
            mask,
            sample_weight: None,
        };
        let rg = Rows {
            y_true: g.view(),
            y_score: s.view(),
            mask,
            sample_weight: None,
        };
        for (a, b) in [
            both_paths(|| label_ranking_loss_sum(&r, &seq()).unwrap()),
            both_paths(|| lrap_sum(&r, &seq()).unwrap()),
        ] {
            close(a, b);
        }
        for kk in [None, Some(1), Some(3), Some(20)] {
            let (d, c) = discounts(k, kk, 2.0);
            let disc = Discounts {
                discount: ndarray::ArrayView1::from(&d),
                cumsum: ndarray::ArrayView1::from(&c),
            };
            for ignore_ties in [false, true] {
                for normalize in [false, true] {
                    let (a, b) =
                        both_paths(|| dcg_sum(&rg, &disc, ignore_ties, normalize, &seq()).unwrap());
                    close(a, b);
                }
            }
        }
    }
}

#[test]
fn report_matches_separate_kernels() {
    let (n, k) = (300, 11);
    let t = Array2::from_shape_fn((n, k), |(i, j)| (i * 7 + j * 3) % 9 < i % 10);
    let s = Array2::from_shape_fn((n, k), |(i, j)| ((i * 13 + j * 5) % (2 + i % 5)) as f64);
    let g = t.mapv(|x| if x { 1.0 } else { 0.0 });
    let m = Array2::from_shape_fn((n, k), |(i, j)| (i + 2 * j) % 7 != 0 || i % 3 == 0);
    let w = Array1::from_shape_fn(n, |i| (i % 4) as f64 * 0.5);
    let (d, c) = discounts(k, None, 2.0);
    let disc = Discounts {
        discount: ndarray::ArrayView1::from(&d),
        cumsum: ndarray::ArrayView1::from(&c),
    };
    for mask in [None, Some(m.view())] {
        for sample_weight in [None, Some(w.view())] {
            let r = Rows {
                y_true: t.view(),
                y_score: s.view(),
                mask,
                sample_weight,
            };
            let rg = Rows {
                y_true: g.view(),
                y_score: s.view(),
                mask,
                sample_weight,
            };
            let want = [
                label_ranking_loss_sum(&r, &seq()).unwrap(),
                lrap_sum(&r, &seq()).unwrap(),
                coverage_sum(&r, &seq()).unwrap(),
                one_error_sum(&r, &seq()).unwrap(),
                dcg_sum(&rg, &disc, false, true, &seq()).unwrap(),
            ];
            let (got, got_sorted) = {
                let a = report_sums(&r, &seq()).unwrap();
                FORCE_SORT.with(|x| x.set(true));
                let b = report_sums(&r, &seq()).unwrap();
                FORCE_SORT.with(|x| x.set(false));
                (a, b)
            };
            for (i, w) in want.iter().enumerate() {
                assert_eq!(got.sums[i].to_bits(), w.to_bits(), "{i}");
                close(got_sorted.sums[i], *w);
            }
            // The "relevant rows" one-error, row by row from its definition: the
            // row counts when it has a relevant known label; it is an error when
            // an irrelevant known label scores at least the best relevant one.
            let (mut errors, mut rows_rel) = (0.0, 0.0);
            for i in 0..n {
                let known = |j: usize| mask.is_none_or(|m| m[[i, j]]);
                let best = |rel: bool| {
                    (0..k)
                        .filter(|&j| known(j) && t[[i, j]] == rel)
                        .map(|j| s[[i, j]])
                        .fold(f64::NEG_INFINITY, f64::max)
                };
                let wi = sample_weight.map_or(1.0, |w| w[i]);
                if (0..k).any(|j| known(j) && t[[i, j]]) {
                    rows_rel += wi;
                    let no_irrelevant = !(0..k).any(|j| known(j) && !t[[i, j]]);
                    if !no_irrelevant && best(false) >= best(true) {
                        errors += wi;
                    }
                }
            }
            assert!(
                errors > 0.0 && errors < rows_rel,
                "the case tests both outcomes"
            );
            for g in [&got, &got_sorted] {
                close(g.sums[5], errors);
                close(g.sums[6], rows_rel);
            }
            let ws = sample_weight.map_or(n as f64, |w| w.sum());
            close(got.weight_sum, ws);
        }
    }
}

#[test]
fn checked_pass_reports_what_it_saw() {
    let t = array![[0i64, 1, 0], [2, 0, 1]];
    let s = array![[0.1, f64::INFINITY, 0.3], [0.1, 0.2, 0.3]];
    let r = Rows {
        y_true: t.view(),
        y_score: s.view(),
        mask: None,
        sample_weight: None,
    };
    let (_, seen) = metric_sum_checked(&r, RankingMetric::Lrap, &seq()).unwrap();
    assert!(seen.score_nonfinite && seen.labels.more && !seen.true_negative);
    // Masking out the 2 and the inf: two distinct labels (0 from the unknowns too).
    let m = array![[true, false, true], [false, true, true]];
    let r = Rows {
        mask: Some(m.view()),
        ..r
    };
    let (_, seen) = metric_sum_checked(&r, RankingMetric::Lrap, &seq()).unwrap();
    assert!(!seen.score_nonfinite && !seen.labels.more);
    assert_eq!(seen.labels.values(), &[0, 1]);
    let tf = array![[0.0, -1.0, f64::NAN]];
    let sf = array![[0.1f32, 0.2, 0.3]];
    let r = Rows {
        y_true: tf.view(),
        y_score: sf.view(),
        mask: None,
        sample_weight: None,
    };
    let (_, seen) = metric_sum_checked(&r, RankingMetric::Coverage, &seq()).unwrap();
    assert!(seen.true_nonfinite && seen.true_negative && !seen.score_nonfinite);
}

#[test]
fn thread_count_does_not_change_results() {
    let n = 50_000;
    let t = Array2::from_shape_fn((n, 7), |(i, j)| (i * 13 + j * 5) % 4 == 0);
    let s = Array2::from_shape_fn((n, 7), |(i, j)| ((i * 7 + j * 3) % 5) as f64 / 4.0);
    let a = lrap_sum(&rows(&t, &s), &Parallelism { threads: 1 }).unwrap();
    let b = lrap_sum(&rows(&t, &s), &Parallelism { threads: 2 }).unwrap();
    assert_eq!(a.to_bits(), b.to_bits());
}
