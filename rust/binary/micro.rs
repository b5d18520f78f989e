//! Micro average, unweighted, in bounded memory: the bucket stream.
//!
//! The micro average treats all N x K known cells as one binary problem. Gathering
//! and sorting every key at once costs 16 bytes per cell (keys + scratch), twice the
//! size of a float64 score matrix. Instead the cells are streamed in key ranges:
//!
//! 1. one pass (parallel over row blocks) histograms the top 18 bits of the negated
//!    keys, counting positives and negatives per bucket;
//! 2. consecutive buckets (ascending negated key = descending score) are grouped so
//!    that a group's cells plus its largest bucket fit in a fixed budget of `cap`
//!    keys; a bucket too big for that is refined by another pass over its cells on
//!    the next 18 bits (a bucket of one key value needs no keys at all, only counts);
//! 3. each group re-scans the matrix, placing its cells directly at their bucket
//!    (positives then negatives, offsets from the histogram), and walks each bucket
//!    into tie blocks (super::count_walk). The scan of C-ordered rows is a
//!    vectorised mask pass (one bit per cell: known and in the group) followed by a
//!    visit of the set bits only (`filter_cells`), so a group that holds an eighth of
//!    the cells costs about one read of the matrix. The cumulative counts before
//!    every bucket are known from the histogram, so groups are independent: they run
//!    in parallel (at most `MICRO_WORKERS` buffers alive) and are reduced in order.
//!
//! AP terms are the same values as in the one-sort path (same counts, same formula);
//! they are summed pairwise per bucket and the bucket sums with Neumaier's
//! compensated sum (the term count is unknown until the end, so NumPy's pairwise tree
//! over all terms cannot be reproduced). ROC AUC is the exact Mann-Whitney count
//! `sum over blocks of neg * (2 * pos_before + pos)` in integers divided by
//! `2 * P * N`, the area of the same curve. Both stay within 1e-15 relative of the
//! one-sort values (docs/deviations.md); neither depends on the thread count, since
//! groups are fixed by the input and `cap` alone.

use ndarray::ArrayView2;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::micro_scan::{filter_rows, Buckets};
use super::{MetricValue, FLAG_EMPTY, FLAG_NO_POSITIVE, FLAG_SINGLE_CLASS};
use crate::error::Result;
use crate::labels::LabelGrid;
use crate::numeric::CompSum;
use crate::parallel::Parallelism;
use crate::score::Score;

/// Histogram digit of the micro streaming pass: 2**18 buckets (2 MiB of counters
/// per worker) make buckets small enough (1/128 of [0.5, 1) for uniform
/// probabilities) that groups fill their buffer closely, hence few re-scans.
pub(super) const MICRO_DIGIT: u32 = 18;
/// The same for 4-byte scores: 2**17 buckets. Over 32-bit keys that still splits
/// [0.5, 1) into 64 buckets, and it halves the tables, which are 4x larger relative
/// to a float32 matrix than to a float64 one (`multilabel_report`'s float32 peak
/// went past 0.5x of the scores with 2**18).
pub(super) const MICRO_DIGIT_NARROW: u32 = 17;
/// Groups processed at once (each holds one `cap`-key buffer).
pub(super) const MICRO_WORKERS: usize = 2;
/// Inputs with at most this many cells take the one-sort path.
pub(super) const MICRO_MIN_CAP: usize = 1 << 18;

/// Keys per group buffer for `cells` cells of `score_bytes` bytes each: an eighth
/// of the cells for 8-byte scores (a sixteenth for 4-byte ones), so that
/// `MICRO_WORKERS` buffers of 8-byte keys (scratch included) stay at 0.25x the
/// score matrix.
pub(super) fn micro_cap(cells: usize, score_bytes: usize) -> usize {
    (cells / 64 * score_bytes.clamp(1, 8)).max(MICRO_MIN_CAP)
}

/// Call `f(negated key, positive)` for every known cell of `rows`, row-major.
#[inline]
pub(super) fn scan_cells<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    rows: std::ops::Range<usize>,
    mut f: impl FnMut(u64, bool),
) {
    let k = s.ncols();
    let sr = s.slice(ndarray::s![rows.clone(), ..]);
    if m.is_none() && (1..=64).contains(&k) && !rows.is_empty() {
        if let (Some(sv), Some(yv)) = (sr.as_slice(), y.block(rows.clone())) {
            // C-ordered blocks: each row's labels as one word.
            let ck = yv.len() / rows.len();
            if ck > 0 {
                for (srow, yrow) in sv.chunks_exact(k).zip(yv.chunks_exact(ck)) {
                    let w = L::row_word(yrow);
                    for (j, &v) in srow.iter().enumerate() {
                        f(!v.key(), (w >> j) & 1 != 0);
                    }
                }
                return;
            }
        }
    }
    for i in rows {
        let (srow, yrow) = (s.row(i), y.row(i));
        let mrow = m.map(|m| m.row(i));
        for (j, &v) in srow.iter().enumerate() {
            let known = mrow
                .as_ref()
                .is_none_or(|r| r.get(j).copied().unwrap_or(false));
            if known {
                let t = yrow.get(L::cell_index(j)).is_some_and(|&c| L::is_pos(c, j));
                f(!v.key(), t);
            }
        }
    }
}

/// Bucket histogram of the cells whose key has `k >> top == prefix` (`top == 64`:
/// all cells), on the `width` bits below `top`: positives at `2d`, negatives at
/// `2d + 1` for bucket `d`.
#[allow(clippy::too_many_arguments)]
pub(super) fn micro_histogram<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    top: u32,
    prefix: u64,
    width: u32,
    par: &Parallelism,
) -> Result<Vec<u32>> {
    let nb = 1usize << width;
    let shift = top - width;
    let mask = (nb - 1) as u64;
    let (n, k) = s.dim();
    let blocks = n.div_ceil(crate::parallel::ROW_BLOCK);
    let elements = n.saturating_mul(k);
    let workers = if par.is_parallel_for(elements) {
        par.threads.min(blocks).max(1)
    } else {
        1
    };
    let next = AtomicUsize::new(0);
    // One interleaved array per worker: [pos, neg] per bucket. u32 is enough: the
    // caller checked that there are fewer than 2**31 cells.
    let init = || vec![0u32; 2 * nb];
    let parts = par.map_init(workers, elements, init, |h| {
        loop {
            let b = next.fetch_add(1, Ordering::Relaxed);
            if b >= blocks {
                break;
            }
            let start = b * crate::parallel::ROW_BLOCK;
            let rows = start..(start + crate::parallel::ROW_BLOCK).min(n);
            scan_cells(s, y, m, rows, |key, pos| {
                let inside = top >= 64 || key >> top == prefix;
                let d = ((key >> shift) & mask) as usize;
                if inside {
                    if let Some(c) = h.get_mut(2 * d + usize::from(!pos)) {
                        *c += 1;
                    }
                }
            });
        }
        std::mem::take(h)
    })?;
    // Summed into the first worker's table (u32 still: fewer than 2**31 cells), with
    // no wider copy: at 2**18 buckets each table is 2 MiB, and two u64 copies would
    // add 4 MiB to the peak (0.07x of a 1M x 15 float32 matrix).
    let mut parts = parts.into_iter();
    let mut sum = parts.next().unwrap_or_else(|| vec![0u32; 2 * nb]);
    for part in parts {
        for (a, b) in sum.iter_mut().zip(part) {
            *a += b;
        }
    }
    Ok(sum)
}

/// One unit of the micro stream, in descending score order.
pub(super) enum MicroTask {
    /// Buckets `first..first + counts.len()` of digit `shift` (bucket id = the key
    /// shifted right by `shift`), with their (positives, negatives).
    Group {
        shift: u32,
        first: u64,
        counts: Vec<(u64, u64)>,
        pos_before: u64,
        rows_before: u64,
    },
    /// One tie block (all keys equal).
    Block {
        pos: u64,
        neg: u64,
        pos_before: u64,
        rows_before: u64,
    },
}

/// Plan the tasks for the cells with `k >> top == prefix` (`top == 64`: all),
/// appending them to `tasks`; `before` = (positives, rows) ranked above them.
/// Buckets of more than `refine / 2` cells are refined (this fixes the buckets, and
/// so the result); groups hold at most `cap` keys with `copies` scratch copies of
/// their largest bucket (this only decides how many re-scans are needed).
#[allow(clippy::too_many_arguments)]
pub(super) fn micro_plan<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    top: u32,
    prefix: u64,
    before: (u64, u64),
    (refine, cap, copies): (usize, usize, usize),
    par: &Parallelism,
    tasks: &mut Vec<MicroTask>,
) -> Result<()> {
    let digit = if std::mem::size_of::<S>() == 4 {
        MICRO_DIGIT_NARROW
    } else {
        MICRO_DIGIT
    };
    let width = digit.min(top);
    let shift = top - width;
    let hist = micro_histogram(s, y, m, top, prefix, width, par)?;
    let base = if top >= 64 { 0 } else { prefix << width };
    let (mut cp, mut cr) = before;
    // Current group: first bucket id, counts, running total and largest bucket.
    let mut group: Vec<(u64, u64)> = Vec::new();
    let mut first = 0u64;
    let (mut g_pos, mut g_rows) = (0u64, 0u64);
    let (mut g_total, mut g_max) = (0usize, 0usize);
    let refine64 = refine as u64;
    let flush = |group: &mut Vec<(u64, u64)>,
                 first: u64,
                 g_pos: u64,
                 g_rows: u64,
                 tasks: &mut Vec<MicroTask>| {
        if !group.is_empty() {
            tasks.push(MicroTask::Group {
                shift,
                first,
                counts: std::mem::take(group),
                pos_before: g_pos,
                rows_before: g_rows,
            });
        }
    };
    for (d, pq) in hist.chunks_exact(2).enumerate() {
        let (p, q) = (u64::from(pq[0]), u64::from(pq[1]));
        let c = p + q;
        let id = base | d as u64;
        if c == 0 {
            // Empty buckets keep a group contiguous only if it is empty.
            if !group.is_empty() {
                group.push((0, 0));
            }
            continue;
        }
        let cu = usize::try_from(c).unwrap_or(usize::MAX);
        if shift == 0 || c.saturating_mul(2) > refine64 {
            flush(&mut group, first, g_pos, g_rows, tasks);
            (g_total, g_max) = (0, 0);
            if shift == 0 {
                tasks.push(MicroTask::Block {
                    pos: p,
                    neg: q,
                    pos_before: cp,
                    rows_before: cr,
                });
            } else {
                micro_plan(
                    s,
                    y,
                    m,
                    shift,
                    id,
                    (cp, cr),
                    (refine, cap, copies),
                    par,
                    tasks,
                )?;
            }
        } else {
            if g_total + cu + copies * g_max.max(cu) > cap {
                flush(&mut group, first, g_pos, g_rows, tasks);
                (g_total, g_max) = (0, 0);
            }
            if group.is_empty() {
                first = id;
                (g_pos, g_rows) = (cp, cr);
            }
            group.push((p, q));
            g_total += cu;
            g_max = g_max.max(cu);
        }
        cp += p;
        cr += c;
    }
    flush(&mut group, first, g_pos, g_rows, tasks);
    Ok(())
}

/// One group of buckets to run: its buckets, their (positives, negatives), the
/// (positives, rows) ranked above the first, and all positives.
#[derive(Clone, Copy)]
pub(super) struct Group<'a> {
    pub(super) g: Buckets,
    pub(super) counts: &'a [(u64, u64)],
    pub(super) before: (u64, u64),
    pub(super) n_pos: u64,
}

/// Where each bucket's cells begin in a group buffer: `starts[2d]` its positives,
/// `starts[2d + 1]` its negatives, last the group's cells; and its largest bucket.
fn bucket_starts(counts: &[(u64, u64)]) -> (Vec<usize>, usize) {
    let mut starts = Vec::with_capacity(2 * counts.len() + 1);
    let (mut acc, mut biggest) = (0usize, 0usize);
    for &(p, q) in counts {
        let cells = (p + q) as usize;
        starts.extend([acc, acc + p as usize]);
        acc += cells;
        biggest = biggest.max(cells);
    }
    starts.push(acc);
    (starts, biggest)
}

/// What one task contributes: the AP term sum of each of its buckets that holds
/// a positive (a [`super::count_walk::Walk`] each; the caller adds them up with a
/// compensated sum, so that the result depends on the buckets only, not on how
/// they were grouped) and twice the Mann-Whitney count.
#[derive(Default)]
pub(super) struct MicroPart {
    pub(super) ap: Vec<f64>,
    pub(super) u2: u128,
}
/// Run one group: gather its cells by bucket into `buf` (at least the group's cells
/// plus its largest bucket long: the rest is sort scratch), sort and walk each
/// bucket.
pub(super) fn micro_group<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    group: &Group<'_>,
    buf: &mut [u64],
) -> MicroPart {
    let Group {
        g,
        counts,
        before,
        n_pos,
    } = *group;
    let (mut offsets, biggest) = bucket_starts(counts);
    // offsets[2d] = positives cursor, offsets[2d + 1] = negatives cursor.
    let total = offsets.pop().unwrap_or(0);
    if buf.len() < total + biggest {
        return MicroPart::default(); // unreachable: the caller sizes `buf`
    }
    let (keys, rest) = buf.split_at_mut(total);
    let tmp = &mut rest[..biggest];
    let (shift, first) = (g.shift, g.first);
    let n_rows = s.nrows();
    // Place one chosen cell at its bucket's cursor (positives, then negatives).
    let mut put = |key: u64, pos: bool| {
        let d = ((key >> shift).wrapping_sub(first)) as usize;
        if let Some(o) = offsets.get_mut(2 * d + usize::from(!pos)) {
            if let Some(x) = keys.get_mut(*o) {
                *x = key;
            }
            *o += 1;
        }
    };
    filter_rows(s, y, m, 0..n_rows, g, &mut put);
    walk_buckets(counts, keys, tmp, before, n_pos)
}

/// Walk the buckets `counts` whose keys lie in `keys` in bucket order (each
/// bucket's positives, then its negatives), `before` = (positives, rows) ranked
/// above the first; `tmp` holds the largest bucket. Each bucket is walked without
/// sorting (super::count_walk); its AP terms are summed with a compensated sum,
/// the bucket sums by the caller.
pub(super) fn walk_buckets(
    counts: &[(u64, u64)],
    keys: &mut [u64],
    tmp: &mut [u64],
    before: (u64, u64),
    n_pos: u64,
) -> MicroPart {
    let mut part = MicroPart::default();
    let (mut bp, mut br) = before;
    let mut start = 0usize;
    for &(p, q) in counts {
        let (pu, qu) = (p as usize, q as usize);
        let c = pu + qu;
        if c > 0 {
            let (Some(kb), Some(tb)) = (keys.get_mut(start..start + c), tmp.get_mut(..c)) else {
                break; // unreachable: the caller sizes both buffers
            };
            let mut walk = super::count_walk::Walk::new((bp, br - bp), n_pos);
            walk.run(kb, pu, tb);
            part.u2 += walk.u2;
            if pu > 0 {
                part.ap.push(walk.ap.value());
            }
        }
        bp += p;
        br += p + q;
        start += c;
    }
    part
}

/// [`micro_group`] by two threads at once, for a group up to twice as large in
/// the same memory as two groups run side by side, so the matrix is read half as
/// often. `buf` holds the group's cells plus two of its largest buckets.
///
/// The filter pass is split by rows: the first thread fills each bucket's
/// positives and negatives from the front, the second from the back, and the
/// histogram's exact counts make them meet (a bucket's cells end up in another
/// order than one thread's row-major pass would leave them, which the walk does
/// not see: it depends on each bucket's keys and classes only). The cells are
/// written as relaxed atomics, so that scores changed by another thread during
/// the call can garble the answer but never make two threads write one place
/// unsynchronised. Then the buckets are cut in two runs of about equal cells and
/// each thread walks one; their parts are joined in bucket order, so the result is
/// [`micro_group`]'s, bit for bit.
pub(super) fn micro_group_pair<S: Score, L: LabelGrid>(
    s: &ArrayView2<S>,
    y: &L,
    m: Option<&ArrayView2<bool>>,
    group: &Group<'_>,
    buf: &mut [u64],
    par: &Parallelism,
) -> Result<MicroPart> {
    use std::sync::atomic::AtomicU64;
    let Group {
        g,
        counts,
        before,
        n_pos,
    } = *group;
    let nb = counts.len();
    let (starts, biggest) = bucket_starts(counts);
    let total = starts[2 * nb];
    if buf.len() < total + 2 * biggest {
        return Ok(MicroPart::default()); // unreachable: the caller sizes `buf`
    }
    let (keys, rest) = buf.split_at_mut(total);
    {
        // SAFETY: AtomicU64 has the size and bit validity of u64, and a Vec<u64>'s
        // buffer is aligned for it on the targets with 64-bit atomics; `keys` is
        // borrowed mutably for the whole scope, so nothing else reads it meanwhile.
        let cells: &[AtomicU64] = unsafe {
            debug_assert_eq!(
                keys.as_ptr()
                    .align_offset(std::mem::align_of::<AtomicU64>()),
                0
            );
            std::slice::from_raw_parts(keys.as_mut_ptr().cast::<AtomicU64>(), keys.len())
        };
        let starts = &starts;
        let n_rows = s.nrows();
        let half = n_rows / 2;
        par.map(2, s.len(), |w| {
            // Cursor per region: the front for the first half, one past the back
            // for the second; a write outside its region is dropped (the counts
            // are exact unless the scores changed under the call).
            let mut cur: Vec<usize> = if w == 0 {
                starts[..2 * nb].to_vec()
            } else {
                starts[1..].to_vec()
            };
            let put = |key: u64, pos: bool| {
                let d = ((key >> g.shift).wrapping_sub(g.first)) as usize;
                let r = 2 * d + usize::from(!pos);
                let (Some(c), Some(&lo), Some(&hi)) =
                    (cur.get_mut(r), starts.get(r), starts.get(r + 1))
                else {
                    return;
                };
                if w == 0 {
                    if *c < hi {
                        if let Some(x) = cells.get(*c) {
                            x.store(key, Ordering::Relaxed);
                        }
                        *c += 1;
                    }
                } else if *c > lo {
                    *c -= 1;
                    if let Some(x) = cells.get(*c) {
                        x.store(key, Ordering::Relaxed);
                    }
                }
            };
            let rows = if w == 0 { 0..half } else { half..n_rows };
            filter_rows(s, y, m, rows, g, put);
        })?;
    }
    // Two runs of buckets of about total / 2 cells each.
    let mut cut = 0usize;
    while cut < nb && 2 * starts[2 * cut + 2] <= total {
        cut += 1;
    }
    let cells_a = starts[2 * cut];
    let (pos_a, rows_a) = counts[..cut]
        .iter()
        .fold((0u64, 0u64), |(a, b), &(p, q)| (a + p, b + p + q));
    let (ka, kb) = keys.split_at_mut(cells_a);
    let (ta, tb) = rest.split_at_mut(biggest);
    let runs = [
        (&counts[..cut], ka, ta, before),
        (
            &counts[cut..],
            kb,
            &mut tb[..biggest],
            (before.0 + pos_a, before.1 + rows_a),
        ),
    ];
    let mut runs = runs.into_iter();
    let parts = par.map_init(
        2,
        total,
        || runs.next(),
        |run| {
            run.take()
                .map(|(c, k, t, b)| walk_buckets(c, k, t, b, n_pos))
                .unwrap_or_default()
        },
    )?;
    let mut part = MicroPart::default();
    for p in parts {
        part.ap.extend(p.ap);
        part.u2 += p.u2;
    }
    Ok(part)
}

/// Micro AP and full ROC AUC, unweighted, in bounded memory (see the section
/// comment); `cap` = keys per group buffer when `MICRO_WORKERS` groups run at once
/// (a single worker gets `MICRO_WORKERS` times more).
pub(super) fn micro_streaming<S: Score, L: LabelGrid>(
    y_score: ArrayView2<S>,
    y_pos: L,
    mask: Option<ArrayView2<bool>>,
    cap: usize,
    par: &Parallelism,
) -> Result<(MetricValue, MetricValue)> {
    let (s, y, m) = (&y_score, &y_pos, mask.as_ref());
    let mut tasks = Vec::new();
    // 4-byte scores have 32-bit keys: the top 32 bits of every negated key are ones,
    // so the first histogram starts below them.
    let (top, prefix) = if std::mem::size_of::<S>() == 4 {
        (32, u64::from(u32::MAX))
    } else {
        (64, 0)
    };
    // The buckets (and so the value) depend on `cap` only; fewer workers get
    // bigger groups within the same memory, hence fewer re-scans.
    let workers = if par.is_parallel_for(y_score.len()) {
        par.threads.clamp(1, MICRO_WORKERS)
    } else {
        1
    };
    // Two workers share each group (micro_group_pair): one buffer of twice the
    // cells, with a walk scratch for each of them.
    let pair = workers >= 2;
    let copies = if pair { 2 } else { 1 };
    let group_cap = cap.saturating_mul(MICRO_WORKERS) / if pair { 1 } else { workers };
    micro_plan(
        s,
        y,
        m,
        top,
        prefix,
        (0, 0),
        (cap, group_cap, copies),
        par,
        &mut tasks,
    )?;
    let (mut n_pos, mut n_all) = (0u64, 0u64);
    for t in &tasks {
        match t {
            MicroTask::Group { counts, .. } => {
                for &(p, q) in counts {
                    n_pos += p;
                    n_all += p + q;
                }
            }
            MicroTask::Block { pos, neg, .. } => {
                n_pos += pos;
                n_all += pos + neg;
            }
        }
    }
    let n_neg = n_all - n_pos;
    // Largest buffer a group needs: its cells plus its largest bucket (<= cap).
    let need = tasks
        .iter()
        .map(|t| match t {
            MicroTask::Group { counts, .. } => {
                let total: u64 = counts.iter().map(|&(p, q)| p + q).sum();
                let big = counts.iter().map(|&(p, q)| p + q).max().unwrap_or(0);
                usize::try_from(total + copies as u64 * big).unwrap_or(usize::MAX)
            }
            MicroTask::Block { .. } => 0,
        })
        .max()
        .unwrap_or(0);
    if n_all == 0 {
        return Ok((
            MetricValue {
                value: f64::NAN,
                flags: FLAG_EMPTY,
            },
            MetricValue {
                value: f64::NAN,
                flags: FLAG_EMPTY | FLAG_SINGLE_CLASS,
            },
        ));
    }
    let block = |pos: u64, neg: u64, pos_before: u64, rows_before: u64| {
        let mut walk = super::count_walk::Walk::new((pos_before, rows_before - pos_before), n_pos);
        walk.group(pos, neg);
        MicroPart {
            ap: if pos > 0 {
                vec![walk.ap.value()]
            } else {
                Vec::new()
            },
            u2: walk.u2,
        }
    };
    // One group at a time: both workers on it (micro_group_pair), or the one.
    let mut all: Vec<MicroPart> = Vec::with_capacity(tasks.len());
    let mut buf = vec![0u64; need];
    for task in &tasks {
        all.push(match task {
            MicroTask::Group {
                shift,
                first,
                counts,
                pos_before,
                rows_before,
            } => {
                let group = Group {
                    g: Buckets {
                        shift: *shift,
                        first: *first,
                        span: counts.len() as u64,
                    },
                    counts,
                    before: (*pos_before, *rows_before),
                    n_pos,
                };
                if pair {
                    micro_group_pair(s, y, m, &group, &mut buf, par)?
                } else {
                    micro_group(s, y, m, &group, &mut buf)
                }
            }
            MicroTask::Block {
                pos,
                neg,
                pos_before,
                rows_before,
            } => block(*pos, *neg, *pos_before, *rows_before),
        });
    }
    let mut ap = CompSum::default();
    let mut u2 = 0u128;
    for p in &all {
        for &x in &p.ap {
            ap.add(x);
        }
        u2 += p.u2;
    }
    let ap_v = if n_pos == 0 {
        MetricValue {
            value: 0.0,
            flags: FLAG_NO_POSITIVE,
        }
    } else {
        let v = -ap.value();
        MetricValue {
            value: if v > 0.0 { v } else { 0.0 },
            flags: 0,
        }
    };
    let auc_v = if n_pos == 0 || n_neg == 0 {
        MetricValue {
            value: f64::NAN,
            flags: FLAG_SINGLE_CLASS,
        }
    } else {
        let den = 2u128 * u128::from(n_pos) * u128::from(n_neg);
        MetricValue {
            value: u2 as f64 / den as f64,
            flags: 0,
        }
    };
    Ok((ap_v, auc_v))
}
