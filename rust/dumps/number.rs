//! JSON numbers as float64, exactly: one pass over the token (eight digits at a
//! time), Clinger's fast path where the digits and the power of ten are exact,
//! Rust's correctly rounded `str::parse` otherwise. Shared by the JSONL and CSV
//! readers, whose results must equal pyarrow's to the bit.

use super::line::Decline;

/// The JSON number (strict grammar) at `start` of `s`: a finite float64,
/// correctly rounded (as every JSON and CSV reader here parses it), read in one
/// pass, and the index after it. Integers of more than 15 digits and numbers
/// beyond float64's range are declined rather than second-guessed.
pub(super) fn score_at(s: &[u8], start: usize) -> Result<(f64, usize), Decline> {
    let mut i = start;
    let neg = s.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    // the digits as an integer: exact while there are at most 19 of them
    let mut mantissa: u64 = 0;
    let int_digits;
    match s.get(i) {
        Some(b'0') => {
            i += 1;
            int_digits = 1;
        }
        Some(b'1'..=b'9') => {
            let end = take_digits(s, i, &mut mantissa);
            int_digits = end - i;
            i = end;
        }
        _ => return Err(Decline("not a number")),
    }
    let mut real = false;
    let mut frac = 0i64;
    if s.get(i) == Some(&b'.') {
        real = true;
        i += 1;
        if !matches!(s.get(i), Some(b'0'..=b'9')) {
            return Err(Decline("not a number"));
        }
        let end = take_digits(s, i, &mut mantissa);
        frac = (end - i) as i64;
        i = end;
    }
    let mut exp = 0i64;
    if matches!(s.get(i), Some(b'e' | b'E')) {
        real = true;
        i += 1;
        let exp_neg = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        if !matches!(s.get(i), Some(b'0'..=b'9')) {
            return Err(Decline("not a number"));
        }
        while let Some(&b) = s.get(i) {
            if !b.is_ascii_digit() {
                break;
            }
            // past any exponent float64 can use: the slow path decides
            exp = (exp * 10 + i64::from(b - b'0')).min(1 << 20);
            i += 1;
        }
        if exp_neg {
            exp = -exp;
        }
    }
    if !real && int_digits > 15 {
        return Err(Decline("a long integer score"));
    }
    // Clinger's fast path: an integer below 2^53 times or over an exact power
    // of ten is one correctly rounded operation on exact values
    let e10 = exp - frac;
    let exact = int_digits as i64 + frac <= 19 && mantissa <= 1 << 53;
    if exact && (-22..=22).contains(&e10) {
        let m = mantissa as f64;
        let v = if e10 >= 0 {
            m * POW10[e10 as usize]
        } else {
            m / POW10[(-e10) as usize]
        };
        return Ok((if neg { -v } else { v }, i));
    }
    let text = std::str::from_utf8(&s[start..i]).map_err(|_| Decline("not a number"))?;
    let v: f64 = text.parse().map_err(|_| Decline("not a number"))?;
    if v.is_finite() {
        Ok((v, i))
    } else {
        Err(Decline("a score beyond float64"))
    }
}

/// A score token on its own (the whole of `tok`, no whitespace), as a line's
/// scores are read: the value, or the decline.
#[cfg(test)]
pub(super) fn parse_score(tok: &[u8]) -> Result<f64, Decline> {
    if tok.first().is_none_or(|&b| b.is_ascii_whitespace()) {
        return Err(Decline("not a number"));
    }
    let (v, end) = score_at(tok, 0)?;
    if end == tok.len() {
        Ok(v)
    } else {
        Err(Decline("text after the number"))
    }
}

/// Skip the ASCII digits of `s` from `i` (eight at a time where eight bytes are
/// left), folding them into `m` (wrapping: exact while `m` keeps at most 19
/// digits); the index after them.
#[inline]
fn take_digits(s: &[u8], mut i: usize, m: &mut u64) -> usize {
    while let Some(chunk) = s.get(i..i + 8) {
        let Ok(bytes) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let c = u64::from_le_bytes(bytes);
        // the high bit of each byte that is not '0'..='9' (below: borrow; above: carry)
        let non_digit = (c.wrapping_sub(0x3030_3030_3030_3030)
            | c.wrapping_add(0x4646_4646_4646_4646))
            & 0x8080_8080_8080_8080;
        let n = (non_digit.trailing_zeros() / 8) as usize;
        if n == 0 {
            return i;
        }
        // the n digits moved to the high bytes, zeros (leading zeros) below
        let mut v = c << (8 * (8 - n));
        v = ((v & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561)) >> 8;
        v = ((v & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601)) >> 16;
        v = ((v & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001)) >> 32;
        *m = m.wrapping_mul(POW10_U64[n]).wrapping_add(v);
        i += n;
        if n < 8 {
            return i;
        }
    }
    while let Some(&b) = s.get(i) {
        if !b.is_ascii_digit() {
            break;
        }
        *m = m.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
        i += 1;
    }
    i
}

/// 10^0 ..= 10^8 as integers.
const POW10_U64: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Powers of ten that float64 holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];
