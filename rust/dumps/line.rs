//! One JSONL prediction line, scanned in place: `{"id": ..., "scores": ...}` with
//! the id a plain string or a 64-bit integer and the scores an object of numbers
//! (or nulls) or a vector of numbers, or null. Anything else is *declined*
//! (`Err(Decline)`): the caller hands the whole file to the general reader, which
//! names the problem. The scanner never guesses: a string with an escape or a
//! control character, a number it cannot parse exactly like JSON, another field,
//! a repeated field, each is a decline.

pub use crate::json_cursor::is_blank;
pub use crate::json_cursor::Decline;
use crate::json_cursor::{Cursor, R};

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

use super::number;

/// Where [`scan_into`] puts the numbers of a line's `scores` as it reads them (the
/// block scanner writes them straight into its columns; [`scan`] collects them).
pub trait ScoreSink {
    /// Field `j` of the score object holds `v` (None: null); a decline when the
    /// line already gave field `j`.
    fn field(&mut self, j: usize, v: Option<f64>) -> R<()>;
    /// The next element of a score vector.
    fn element(&mut self, v: f64);
}

/// A line's `scores` as [`scan_into`] saw it (the numbers went to the sink).
#[derive(Debug, PartialEq)]
pub enum Seen {
    Null,
    Fields,
    Vector,
    /// Discovery only: an object's field names, in order.
    Names(Vec<Vec<u8>>),
}

/// What [`scan_into`] gives besides the numbers.
#[derive(Debug, PartialEq)]
pub struct Head<'a> {
    pub id: Id<'a>,
    pub scores: Seen,
    pub id_first: bool,
}

/// [`ScoreSink`] that keeps what it gets, in line order (for [`scan`]).
#[derive(Default)]
struct Collect {
    fields: Vec<(usize, Option<f64>)>,
    elements: Vec<f64>,
}

impl ScoreSink for Collect {
    fn field(&mut self, j: usize, v: Option<f64>) -> R<()> {
        if self.fields.iter().any(|&(i, _)| i == j) {
            return Err(Decline("a repeated score field"));
        }
        self.fields.push((j, v));
        Ok(())
    }
    fn element(&mut self, v: f64) {
        self.elements.push(v);
    }
}

impl<'a> Cursor<'a> {
    fn lit(&mut self, word: &[u8]) -> bool {
        self.ws();
        if self.s.get(self.i) == word.first() && self.s[self.i..].starts_with(word) {
            self.i += word.len();
            true
        } else {
            false
        }
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
    /// A score: a finite float64, correctly rounded ([`number::score_at`]).
    fn score(&mut self) -> R<f64> {
        self.ws();
        let (v, end) = number::score_at(self.s, self.i)?;
        self.i = end;
        Ok(v)
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

/// Scan one non-blank line. `form` is `None` while the score form is not yet
/// known (the object's names are then returned as [`Scores::Names`]).
pub fn scan<'a>(line: &'a [u8], id_kind: Option<IdKind>, form: Option<&ScoreForm>) -> R<Line<'a>> {
    let mut sink = Collect::default();
    let head = scan_into(line, id_kind, form, &mut sink)?;
    let scores = match head.scores {
        Seen::Null => Scores::Null,
        Seen::Fields => Scores::Fields(sink.fields),
        Seen::Vector => Scores::Vector(sink.elements),
        Seen::Names(names) => Scores::Names(names),
    };
    Ok(Line {
        id: head.id,
        scores,
        id_first: head.id_first,
    })
}

/// [`scan`] with the score numbers given to `sink` as they are read (no
/// allocation per line once the form is known).
pub fn scan_into<'a, S: ScoreSink>(
    line: &'a [u8],
    id_kind: Option<IdKind>,
    form: Option<&ScoreForm>,
    sink: &mut S,
) -> R<Head<'a>> {
    let mut c = Cursor { s: line, i: 0 };
    c.expect(b'{')?;
    let mut id: Option<Id<'a>> = None;
    let mut scores: Option<Seen> = None;
    let mut id_first = false;
    loop {
        let key = c.plain_string()?;
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
                    IdKind::Str => Id::Str(c.plain_string()?),
                    IdKind::Int => Id::Int(c.int_id()?),
                });
            }
            b"scores" => {
                if scores.is_some() {
                    return Err(Decline("a repeated field"));
                }
                scores = Some(scan_scores(&mut c, form, sink)?);
            }
            _ => return Err(Decline("a field other than id and scores")),
        }
        if !c.member_end()? {
            break;
        }
    }
    c.at_end()?;
    let id = id.ok_or(Decline("a line without an id"))?;
    Ok(Head {
        id,
        scores: scores.unwrap_or(Seen::Null),
        id_first,
    })
}

/// The index of the score field whose name starts at the cursor (a string), the
/// cursor then after it. `guess` (the field's place in the first object) is tried
/// first by comparing the bytes in place: a name has no quote, escape or control
/// character, so `name"` there is that string and nothing else.
fn field_index(c: &mut Cursor<'_>, names: &[Vec<u8>], guess: usize) -> R<usize> {
    if let Some(name) = names.get(guess) {
        c.ws();
        let rest = &c.s[c.i..];
        let n = name.len();
        if rest.len() > n + 1 && rest[0] == b'"' && rest[n + 1] == b'"' && &rest[1..=n] == name {
            c.i += n + 2;
            return Ok(guess);
        }
    }
    let key = c.plain_string()?;
    names
        .iter()
        .position(|n| n.as_slice() == key)
        .ok_or(Decline("a score field the first object does not have"))
}

fn scan_scores<S: ScoreSink>(
    c: &mut Cursor<'_>,
    form: Option<&ScoreForm>,
    sink: &mut S,
) -> R<Seen> {
    if c.lit(b"null") {
        return Ok(Seen::Null);
    }
    match (c.peek()?, form) {
        (b'{', Some(ScoreForm::Fields(names))) => {
            c.i += 1;
            if c.peek()? == b'}' {
                c.i += 1;
                return Ok(Seen::Fields);
            }
            // fields usually come in the first object's order
            let mut guess = 0;
            loop {
                let at = field_index(c, names, guess)?;
                guess = at + 1;
                c.expect(b':')?;
                let v = if c.lit(b"null") {
                    None
                } else {
                    Some(c.score()?)
                };
                sink.field(at, v)?;
                match c.peek()? {
                    b',' => c.i += 1,
                    b'}' => {
                        c.i += 1;
                        return Ok(Seen::Fields);
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
                let key = c.plain_string()?;
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
                        return Ok(Seen::Names(names));
                    }
                    _ => return Err(Decline("unexpected character")),
                }
            }
        }
        (b'[', None | Some(ScoreForm::Vector)) => {
            c.i += 1;
            if c.peek()? == b']' {
                c.i += 1;
                return Ok(Seen::Vector);
            }
            loop {
                sink.element(c.score()?);
                match c.peek()? {
                    b',' => c.i += 1,
                    b']' => {
                        c.i += 1;
                        return Ok(Seen::Vector);
                    }
                    _ => return Err(Decline("unexpected character")),
                }
            }
        }
        _ => Err(Decline("scores of another form")),
    }
}
