//! Native reader for JSONL prediction dumps of the common forms:
//! `{"id": "q1", "scores": {"hate": 0.9, ...}}` and `{"id": 7, "scores": [0.9, ...]}`,
//! with `"scores": null` (or no `scores`) for a row without a prediction.
//!
//! The file is read in chunks of whole lines; each chunk is cut into blocks of
//! lines scanned in parallel (`parallel::Parallelism::map`, results in block
//! order, so the output never depends on the thread count) straight into the id
//! column and one float64 column per score field (or one flat vector buffer).
//! The reader covers a narrow, exactly specified subset of JSON (see `line.rs`);
//! on anything outside it the whole file is *declined* and the caller reads it
//! with its general reader, which also owns every error message. So this reader
//! returns data or a decline, never a user-facing error of its own (I/O aside).

pub mod csv;
mod line;
mod number;

use std::io::Read;

use line::{is_blank, scan, scan_into, Id, ScoreSink, Scores, Seen};
pub use line::{Decline, IdKind, ScoreForm};

use crate::parallel::Parallelism;

/// Lines scanned while looking for the first non-null `scores` (the general
/// reader types its columns from the same number of lines).
pub const FORM_LINES: usize = 10_000;

/// Bytes read from the file at a time (whole lines are scanned; a chunk without a
/// newline grows until it holds one).
const CHUNK: usize = 32 << 20;

/// Bytes per unit of parallel work (cut at newlines).
const BLOCK: usize = 1 << 20;

/// The id column: Arrow's string layout (int32 offsets into UTF-8 bytes) or int64.
#[derive(Debug, PartialEq)]
pub enum IdColumn {
    Str { offsets: Vec<i32>, data: Vec<u8> },
    Int(Vec<i64>),
}

/// The score column.
#[derive(Debug, PartialEq)]
pub enum ScoreColumn {
    /// One column per field of the first object (`names`, in its order), each with
    /// a validity byte per row (0: null or missing, or the row's scores are null).
    Fields {
        names: Vec<Vec<u8>>,
        values: Vec<Vec<f64>>,
        valid: Vec<Vec<u8>>,
    },
    /// Arrow's list layout: int32 offsets into the flat values.
    Vector { offsets: Vec<i32>, values: Vec<f64> },
}

/// A dump read by this reader.
#[derive(Debug, PartialEq)]
pub struct JsonlPredictions {
    /// `id` came before `scores` on the first line (the general reader orders its
    /// columns as the first line does).
    pub id_first: bool,
    pub ids: IdColumn,
    pub scores: ScoreColumn,
    /// 1 where the row's `scores` is not null.
    pub row_valid: Vec<u8>,
}

/// What [`read_jsonl_predictions`] gives: the data, or why the file is left to
/// the general reader.
#[derive(Debug)]
pub enum Outcome {
    Read(JsonlPredictions),
    Declined { line: usize, reason: &'static str },
}

/// The rows one block of lines gives.
struct Block {
    ids_int: Vec<i64>,
    id_offsets: Vec<i32>, // relative to this block's id bytes, from 0
    id_data: Vec<u8>,
    values: Vec<Vec<f64>>,
    valid: Vec<Vec<u8>>,
    vec_offsets: Vec<i32>, // relative, from 0
    vec_values: Vec<f64>,
    row_valid: Vec<u8>,
}

struct Schema {
    id_kind: IdKind,
    form: ScoreForm,
    id_first: bool,
}

/// Read the JSONL dump at `path` (uncompressed) with `par`'s threads.
pub fn read_jsonl_predictions(
    path: &std::path::Path,
    par: Parallelism,
) -> std::io::Result<Outcome> {
    read_jsonl_predictions_from(std::fs::File::open(path)?, par)
}

/// [`read_jsonl_predictions`] of any byte stream (a file, or bytes a decompressor
/// gave), read in chunks of whole lines.
pub fn read_jsonl_predictions_from(
    mut file: impl Read,
    par: Parallelism,
) -> std::io::Result<Outcome> {
    let mut buf: Vec<u8> = Vec::new();
    let mut eof = false;
    fill(&mut file, &mut buf, CHUNK, &mut eof)?;
    if buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Ok(declined(1, "a byte-order mark"));
    }
    // the schema: id kind and key order from the first line, the score form from
    // the first non-null scores in the first FORM_LINES lines
    let schema = loop {
        match discover(&buf, eof) {
            Discovery::Found(s) => break s,
            Discovery::Declined(line, reason) => return Ok(declined(line, reason)),
            Discovery::NeedMore if !eof => fill(&mut file, &mut buf, CHUNK, &mut eof)?,
            Discovery::NeedMore => return Ok(declined(1, "no line with scores")),
        }
    };
    let k = match &schema.form {
        ScoreForm::Fields(names) => names.len(),
        ScoreForm::Vector => 0,
    };
    let mut out = Block::new(k);
    let mut lines_before = 0usize;
    loop {
        let end = if eof {
            buf.len()
        } else {
            match memchr::memrchr(b'\n', &buf) {
                Some(p) => p + 1,
                None => {
                    fill(&mut file, &mut buf, CHUNK, &mut eof)?;
                    continue;
                }
            }
        };
        let text = &buf[..end];
        let cuts = block_cuts(text);
        let n_blocks = cuts.len() - 1;
        let results = match par.map(n_blocks, text.len() / 8, |b| {
            scan_block(&text[cuts[b]..cuts[b + 1]], &schema, k)
        }) {
            Ok(r) => r,
            Err(e) => return Err(std::io::Error::other(e.to_string())),
        };
        let mut line_no = lines_before;
        for r in results {
            match r {
                Ok((block, lines)) => {
                    if !out.append(block) {
                        return Ok(declined(line_no + 1, "more than 2 GiB of ids or scores"));
                    }
                    line_no += lines;
                }
                Err((rel_line, d)) => return Ok(declined(line_no + rel_line, d.0)),
            }
        }
        lines_before = line_no;
        buf.drain(..end);
        if eof && buf.is_empty() {
            break;
        }
        fill(&mut file, &mut buf, CHUNK, &mut eof)?;
        if eof && buf.is_empty() {
            break;
        }
    }
    if out.row_valid.is_empty() {
        return Ok(declined(1, "no rows"));
    }
    Ok(Outcome::Read(out.finish(schema)))
}

fn declined(line: usize, reason: &'static str) -> Outcome {
    Outcome::Declined { line, reason }
}

/// Append up to `more` bytes of `file` to `buf`; `eof` once the file is exhausted.
fn fill(
    file: &mut impl Read,
    buf: &mut Vec<u8>,
    more: usize,
    eof: &mut bool,
) -> std::io::Result<()> {
    buf.reserve(more);
    let got = file.by_ref().take(more as u64).read_to_end(buf)?;
    if got < more {
        *eof = true;
    }
    Ok(())
}

/// Block boundaries in `text`: about every `BLOCK` bytes, just after a newline.
fn block_cuts(text: &[u8]) -> Vec<usize> {
    block_cuts_from(text, BLOCK)
}

/// [`block_cuts`] with the first block about `first` bytes.
fn block_cuts_from(text: &[u8], first: usize) -> Vec<usize> {
    let mut cuts = vec![0];
    let mut at = 0;
    while at < text.len() {
        let target = at + if at == 0 { first } else { BLOCK };
        if target >= text.len() {
            break;
        }
        match memchr::memchr(b'\n', &text[target..]) {
            Some(p) => {
                at = target + p + 1;
                if at < text.len() {
                    cuts.push(at);
                }
            }
            None => break,
        }
    }
    cuts.push(text.len());
    cuts
}

enum Discovery {
    Found(Schema),
    Declined(usize, &'static str),
    NeedMore,
}

fn discover(buf: &[u8], eof: bool) -> Discovery {
    let mut first: Option<(IdKind, bool)> = None;
    let mut line_no = 0;
    let mut rest = buf;
    while !rest.is_empty() {
        let (line, complete) = match memchr::memchr(b'\n', rest) {
            Some(p) => (&rest[..p], true),
            None => (rest, eof),
        };
        if !complete {
            return Discovery::NeedMore;
        }
        rest = &rest[(line.len() + 1).min(rest.len())..];
        line_no += 1;
        if line_no > FORM_LINES {
            return Discovery::Declined(line_no, "no scores in the first lines");
        }
        if is_blank(line) {
            continue;
        }
        if std::str::from_utf8(line).is_err() {
            return Discovery::Declined(line_no, "not UTF-8");
        }
        let parsed = match scan(line, first.map(|f| f.0), None) {
            Ok(l) => l,
            Err(d) => return Discovery::Declined(line_no, d.0),
        };
        let kind = match parsed.id {
            Id::Str(_) => IdKind::Str,
            Id::Int(_) => IdKind::Int,
        };
        if first.is_none() {
            if parsed.scores == Scores::Null && !line_has_scores_key(line) {
                return Discovery::Declined(line_no, "a first line without scores");
            }
            first = Some((kind, parsed.id_first));
        }
        let form = match parsed.scores {
            Scores::Null => continue,
            Scores::Names(names) => ScoreForm::Fields(names),
            Scores::Vector(_) => ScoreForm::Vector,
            Scores::Fields(_) => return Discovery::Declined(line_no, "scores of another form"),
        };
        let (id_kind, id_first) = first.unwrap_or((kind, parsed.id_first));
        return Discovery::Found(Schema {
            id_kind,
            form,
            id_first,
        });
    }
    if eof {
        Discovery::Declined(line_no.max(1), "no line with scores")
    } else {
        Discovery::NeedMore
    }
}

/// The first line names `scores` (null): the general reader then types the column
/// from later lines, as this reader does.
fn line_has_scores_key(line: &[u8]) -> bool {
    line.windows(8).any(|w| w == b"\"scores\"")
}

impl Block {
    fn new(k: usize) -> Self {
        Block {
            ids_int: Vec::new(),
            id_offsets: vec![0],
            id_data: Vec::new(),
            values: vec![Vec::new(); k],
            valid: vec![Vec::new(); k],
            vec_offsets: vec![0],
            vec_values: Vec::new(),
            row_valid: Vec::new(),
        }
    }

    /// Append `other`'s rows; false when an offset would pass `i32::MAX`.
    fn append(&mut self, other: Block) -> bool {
        let id_base = self.id_data.len();
        let vec_base = self.vec_values.len();
        if id_base + other.id_data.len() > i32::MAX as usize
            || vec_base + other.vec_values.len() > i32::MAX as usize
        {
            return false;
        }
        let (id_base, vec_base) = (id_base as i32, vec_base as i32);
        self.id_offsets
            .extend(other.id_offsets[1..].iter().map(|o| o + id_base));
        self.id_data.extend_from_slice(&other.id_data);
        self.ids_int.extend_from_slice(&other.ids_int);
        for (mine, theirs) in self.values.iter_mut().zip(other.values) {
            mine.extend_from_slice(&theirs);
        }
        for (mine, theirs) in self.valid.iter_mut().zip(other.valid) {
            mine.extend_from_slice(&theirs);
        }
        self.vec_offsets
            .extend(other.vec_offsets[1..].iter().map(|o| o + vec_base));
        self.vec_values.extend_from_slice(&other.vec_values);
        self.row_valid.extend_from_slice(&other.row_valid);
        true
    }

    fn finish(self, schema: Schema) -> JsonlPredictions {
        let ids = match schema.id_kind {
            IdKind::Str => IdColumn::Str {
                offsets: self.id_offsets,
                data: self.id_data,
            },
            IdKind::Int => IdColumn::Int(self.ids_int),
        };
        let scores = match schema.form {
            ScoreForm::Fields(names) => ScoreColumn::Fields {
                names,
                values: self.values,
                valid: self.valid,
            },
            ScoreForm::Vector => ScoreColumn::Vector {
                offsets: self.vec_offsets,
                values: self.vec_values,
            },
        };
        JsonlPredictions {
            id_first: schema.id_first,
            ids,
            scores,
            row_valid: self.row_valid,
        }
    }
}

/// The score sink of one row of a block: object fields straight into the
/// block's columns (the row's cells were set to null first), vector elements onto
/// its flat values.
struct RowSink<'b> {
    values: &'b mut [Vec<f64>],
    valid: &'b mut [Vec<u8>],
    vec_values: &'b mut Vec<f64>,
    /// Per field, 1 + the last row that gave it (to decline a repeated field).
    given: &'b mut [usize],
    row: usize,
}

impl ScoreSink for RowSink<'_> {
    fn field(&mut self, j: usize, v: Option<f64>) -> Result<(), Decline> {
        // j < k: an index into the schema's names, which size these columns
        if self.given[j] == self.row + 1 {
            return Err(Decline("a repeated score field"));
        }
        self.given[j] = self.row + 1;
        if let Some(v) = v {
            self.values[j][self.row] = v;
            self.valid[j][self.row] = 1;
        }
        Ok(())
    }
    fn element(&mut self, v: f64) {
        self.vec_values.push(v);
    }
}

/// Scan the lines of one block: its rows and its number of lines, or on a
/// decline the block's 1-based line of it.
fn scan_block(text: &[u8], schema: &Schema, k: usize) -> Result<(Block, usize), (usize, Decline)> {
    let mut out = Block::new(k);
    if i32::try_from(text.len()).is_err() {
        // a line of 2 GiB or more: the block's int32 offsets could not hold it
        return Err((1, Decline("a line too long for int32 offsets")));
    }
    if std::str::from_utf8(text).is_err() {
        // the block's first line that is not UTF-8
        let mut n = 0;
        for line in text.split(|&b| b == b'\n') {
            n += 1;
            if std::str::from_utf8(line).is_err() {
                return Err((n, Decline("not UTF-8")));
            }
        }
        return Err((1, Decline("not UTF-8")));
    }
    let mut given = vec![0usize; k];
    let mut n = 0;
    let mut start = 0;
    while start <= text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |p| start + p);
        let line = &text[start..end];
        start = end + 1;
        if end == text.len() && line.is_empty() {
            break; // nothing after the block's last newline
        }
        n += 1;
        if is_blank(line) {
            continue;
        }
        let row = out.row_valid.len();
        for j in 0..k {
            out.values[j].push(0.0);
            out.valid[j].push(0);
        }
        let mut sink = RowSink {
            values: &mut out.values,
            valid: &mut out.valid,
            vec_values: &mut out.vec_values,
            given: &mut given,
            row,
        };
        let head = scan_into(line, Some(schema.id_kind), Some(&schema.form), &mut sink)
            .map_err(|d| (n, d))?;
        match head.id {
            Id::Str(s) => {
                out.id_data.extend_from_slice(s);
                // a block is at most a few MiB: its relative offsets fit
                out.id_offsets.push(out.id_data.len() as i32);
            }
            Id::Int(v) => out.ids_int.push(v),
        }
        match head.scores {
            Seen::Null => out.row_valid.push(0),
            Seen::Fields | Seen::Vector => out.row_valid.push(1),
            Seen::Names(_) => return Err((n, Decline("scores of another form"))),
        }
        if k == 0 {
            out.vec_offsets.push(out.vec_values.len() as i32);
        }
    }
    Ok((out, n))
}

#[cfg(test)]
mod tests;
