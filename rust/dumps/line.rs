//! One JSONL prediction line, scanned in place: `{"id": ..., "scores": ...}` with
//! the id a plain string or a 64-bit integer and the scores an object of numbers
//! (or nulls) or a vector of numbers, or null. Anything else is *declined*
//! (`Err(Decline)`): the caller hands the whole file to the general reader, which
//! names the problem. The scanner never guesses: a string with an escape or a
//! control character, a number it cannot parse exactly like JSON, another field,
//! a repeated field, each is a decline.

/// Why a line was not read here (for tests and `TOXEVAL_TIMINGS`-style notes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decline(pub &'static str);

/// How the `scores` values of a file are laid out (fixed by the first line that
/// has non-null scores).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScoreForm {
    /// `{"cat": p, ...}`: the field names of the first object, in its order.
    Fields(Vec<Vec<u8>>),
    /// `[p, ...]`.
    Vector,
}

/// How ids are written (fixed by the first line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    Str,
    Int,
}

/// An id as it appears on a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id<'a> {
    Str(&'a [u8]),
    Int(i64),
}

/// A `scores` value: null, or where its numbers were written.
#[derive(Debug, PartialEq)]
pub enum Scores {
    Null,
    /// `Fields`: (field index, value or None for null), in line order.
    Fields(Vec<(usize, Option<f64>)>),
    Vector(Vec<f64>),
    /// Discovery only: an object's field names, in order.
    Names(Vec<Vec<u8>>),
}

/// What one non-blank line holds.
#[derive(Debug, PartialEq)]
pub struct Line<'a> {
    pub id: Id<'a>,
    pub scores: Scores,
    /// `id` came before `scores` on the line.
    pub id_first: bool,
}

type R<T> = Result<T, Decline>;

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// True when `line` holds only JSON whitespace (a blank line, skipped by every reader).
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| is_ws(b))
}

struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && is_ws(self.s[self.i]) {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> R<u8> {
        self.ws();
        self.s
            .get(self.i)
            .copied()
            .ok_or(Decline("line ends early"))
    }
    fn expect(&mut self, b: u8) -> R<()> {
        if self.peek()? == b {
            self.i += 1;
            Ok(())
        } else {
            Err(Decline("unexpected character"))
        }
    }
    fn lit(&mut self, word: &[u8]) -> bool {
        self.ws();
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }
    /// A string without escapes or control characters (UTF-8 is checked per block).
    fn string(&mut self) -> R<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.i;
        while let Some(&b) = self.s.get(self.i) {
            match b {
                b'"' => {
                    self.i += 1;
                    return Ok(&self.s[start..self.i - 1]);
                }
                b'\\' => return Err(Decline("a string with an escape")),
                0..=0x1f => return Err(Decline("a control character in a string")),
                _ => self.i += 1,
            }
        }
        Err(Decline("unterminated string"))
    }
    /// The extent of a JSON number (strict grammar) and whether it has a fraction
    /// or exponent.
    fn number_token(&mut self) -> R<(&'a [u8], bool)> {
        self.ws();
        let s = self.s;
        let start = self.i;
        let mut i = start;
        if s.get(i) == Some(&b'-') {
            i += 1;
        }
        match s.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while matches!(s.get(i), Some(b'0'..=b'9')) {
                    i += 1;
                }
            }
            _ => return Err(Decline("not a number")),
        }
        let mut real = false;
        if s.get(i) == Some(&b'.') {
            real = true;
            i += 1;
            if !matches!(s.get(i), Some(b'0'..=b'9')) {
                return Err(Decline("not a number"));
            }
            while matches!(s.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        if matches!(s.get(i), Some(b'e' | b'E')) {
            real = true;
            i += 1;
            if matches!(s.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            if !matches!(s.get(i), Some(b'0'..=b'9')) {
                return Err(Decline("not a number"));
            }
            while matches!(s.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        self.i = i;
        Ok((&s[start..i], real))
    }
    /// A score: a finite float64, correctly rounded (as every JSON reader here
    /// parses it). Integers of more than 15 digits and numbers beyond float64's
    /// range are declined rather than second-guessed.
    fn score(&mut self) -> R<f64> {
        let (tok, real) = self.number_token()?;
        let digits = tok.strip_prefix(b"-").unwrap_or(tok);
        if !real && digits.len() > 15 {
            return Err(Decline("a long integer score"));
        }
        if let Some(v) = exact_short_decimal(tok) {
            return Ok(v);
        }
        let text = std::str::from_utf8(tok).map_err(|_| Decline("not a number"))?;
        let v: f64 = text.parse().map_err(|_| Decline("not a number"))?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(Decline("a score beyond float64"))
        }
    }
    fn int_id(&mut self) -> R<i64> {
        let (tok, real) = self.number_token()?;
        if real {
            return Err(Decline("a fractional id"));
        }
        let text = std::str::from_utf8(tok).map_err(|_| Decline("not a number"))?;
        text.parse().map_err(|_| Decline("an id beyond 64 bits"))
    }
}

/// Powers of ten that float64 holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `-?D+(.D+)?` with at most 15 significant digits, as float64, exactly: the digits
/// are an integer below 2^53 and 10^d is exact, so one correctly rounded division
/// is the correctly rounded value (Clinger's fast path). None for other tokens
/// (exponents, more digits), which go to the general parser.
pub(super) fn exact_short_decimal(tok: &[u8]) -> Option<f64> {
    let (neg, body) = match tok.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, tok),
    };
    let mut mantissa: u64 = 0;
    let mut digits = 0usize;
    let mut frac = 0usize;
    let mut seen_dot = false;
    for &b in body {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(b - b'0');
                if mantissa > 0 {
                    digits += 1;
                }
                if digits > 15 {
                    return None;
                }
                if seen_dot {
                    frac += 1;
                }
            }
            b'.' => seen_dot = true,
            _ => return None,
        }
    }
    let v = mantissa as f64 / *POW10.get(frac)?;
    Some(if neg { -v } else { v })
}

/// Scan one non-blank line. `form` is `None` while the score form is not yet
/// known (the object's names are then returned as [`Scores::Names`]).
pub fn scan<'a>(line: &'a [u8], id_kind: Option<IdKind>, form: Option<&ScoreForm>) -> R<Line<'a>> {
    let mut c = Cursor { s: line, i: 0 };
    c.expect(b'{')?;
    let mut id: Option<Id<'a>> = None;
    let mut scores: Option<Scores> = None;
    let mut id_first = false;
    loop {
        let key = c.string()?;
        c.expect(b':')?;
        match key {
            b"id" => {
                if id.is_some() {
                    return Err(Decline("a repeated field"));
                }
                id_first = scores.is_none();
                let kind = match c.peek()? {
                    b'"' => IdKind::Str,
                    b'-' | b'0'..=b'9' => IdKind::Int,
                    _ => return Err(Decline("an id that is neither a string nor an integer")),
                };
                if id_kind.is_some_and(|k| k != kind) {
                    return Err(Decline("ids of two kinds"));
                }
                id = Some(match kind {
                    IdKind::Str => Id::Str(c.string()?),
                    IdKind::Int => Id::Int(c.int_id()?),
                });
            }
            b"scores" => {
                if scores.is_some() {
                    return Err(Decline("a repeated field"));
                }
                scores = Some(scan_scores(&mut c, form)?);
            }
            _ => return Err(Decline("a field other than id and scores")),
        }
        match c.peek()? {
            b',' => c.i += 1,
            b'}' => {
                c.i += 1;
                break;
            }
            _ => return Err(Decline("unexpected character")),
        }
    }
    c.ws();
    if c.i != line.len() {
        return Err(Decline("text after the object"));
    }
    let id = id.ok_or(Decline("a line without an id"))?;
    Ok(Line {
        id,
        scores: scores.unwrap_or(Scores::Null),
        id_first,
    })
}

fn scan_scores(c: &mut Cursor<'_>, form: Option<&ScoreForm>) -> R<Scores> {
    if c.lit(b"null") {
        return Ok(Scores::Null);
    }
    match (c.peek()?, form) {
        (b'{', Some(ScoreForm::Fields(names))) => {
            c.i += 1;
            let mut out: Vec<(usize, Option<f64>)> = Vec::with_capacity(names.len());
            if c.peek()? == b'}' {
                c.i += 1;
                return Ok(Scores::Fields(out));
            }
            loop {
                let key = c.string()?;
                // names are few (one per category): a linear search from the
                // position the field has in the first object finds it at once
                let guess = out.len();
                let at = if names.get(guess).is_some_and(|n| n.as_slice() == key) {
                    guess
                } else {
                    names
                        .iter()
                        .position(|n| n.as_slice() == key)
                        .ok_or(Decline("a score field the first object does not have"))?
                };
                if out.iter().any(|&(j, _)| j == at) {
                    return Err(Decline("a repeated score field"));
                }
                c.expect(b':')?;
                let v = if c.lit(b"null") {
                    None
                } else {
                    Some(c.score()?)
                };
                out.push((at, v));
                match c.peek()? {
                    b',' => c.i += 1,
                    b'}' => {
                        c.i += 1;
                        return Ok(Scores::Fields(out));
                    }
                    _ => return Err(Decline("unexpected character")),
                }
            }
        }
        (b'{', None) => {
            c.i += 1;
            let mut names: Vec<Vec<u8>> = Vec::new();
            if c.peek()? == b'}' {
                return Err(Decline("an empty scores object"));
            }
            loop {
                let key = c.string()?;
                if names.iter().any(|n| n.as_slice() == key) {
                    return Err(Decline("a repeated score field"));
                }
                names.push(key.to_vec());
                c.expect(b':')?;
                if !c.lit(b"null") {
                    c.score()?;
                }
                match c.peek()? {
                    b',' => c.i += 1,
                    b'}' => {
                        c.i += 1;
                        return Ok(Scores::Names(names));
                    }
                    _ => return Err(Decline("unexpected character")),
                }
            }
        }
        (b'[', None | Some(ScoreForm::Vector)) => {
            c.i += 1;
            let mut out = Vec::new();
            if c.peek()? == b']' {
                c.i += 1;
                return Ok(Scores::Vector(out));
            }
            loop {
                out.push(c.score()?);
                match c.peek()? {
                    b',' => c.i += 1,
                    b']' => {
                        c.i += 1;
                        return Ok(Scores::Vector(out));
                    }
                    _ => return Err(Decline("unexpected character")),
                }
            }
        }
        _ => Err(Decline("scores of another form")),
    }
}
