//! Native reader for CSV / TSV prediction dumps of the common form: a header row,
//! an `id` column (strings) and one column of numbers per category, an empty
//! cell for a missing score:
//!
//! ```text
//! id,hate,violence
//! q1,0.91,0.02
//! q2,,0.5
//! ```
//!
//! It gives the table pyarrow's CSV reader gives for the same file with toxeval's
//! options (the `id` column as strings, an empty cell null, a number column
//! float64, or int64 when no cell has a fraction or exponent), and *declines*
//! (the caller reads the file with pyarrow, which owns every error message)
//! anything outside that subset: a quote anywhere, a byte-order mark, text that
//! is not UTF-8, a cell that is neither empty nor a JSON number (pyarrow's null
//! spellings such as `NA` or `nan` included), an id pyarrow would read as null,
//! a column pyarrow types as strings for another reason (`string_columns`), a row
//! with another number of cells, a repeated or empty column name, a lone carriage
//! return, a column without a number, or one whose type the first block of lines
//! would not settle (pyarrow infers types from its first block in some versions).
//! Blank lines are skipped as pyarrow skips them. Parallel over blocks of lines;
//! results never depend on the thread count.

use super::number::score_at;
use super::{block_cuts_from, Decline};
use crate::parallel::Parallelism;

/// Bytes of the first block: a column's type must be settled there (pyarrow's
/// first block holds at least these bytes).
const FIRST_BLOCK: usize = 64 << 10;

/// pyarrow's default null spellings (`ConvertOptions().null_values`): an id cell
/// written so would be null there, so the file is declined.
const NULL_SPELLINGS: [&[u8]; 17] = [
    b"",
    b"#N/A",
    b"#N/A N/A",
    b"#NA",
    b"-1.#IND",
    b"-1.#QNAN",
    b"-NaN",
    b"-nan",
    b"1.#IND",
    b"1.#QNAN",
    b"N/A",
    b"NA",
    b"NULL",
    b"NaN",
    b"n/a",
    b"nan",
    b"null",
];

/// A column of numbers, typed as pyarrow types it.
#[derive(Debug, PartialEq)]
pub enum NumberColumn {
    Float { values: Vec<f64>, valid: Vec<u8> },
    Int { values: Vec<i64>, valid: Vec<u8> },
}

/// A CSV dump read by this reader: the header's names in order, the id column's
/// place among them (if any) with Arrow's string layout, and the number columns
/// in header order without the id.
#[derive(Debug, PartialEq)]
pub struct CsvPredictions {
    pub names: Vec<Vec<u8>>,
    pub id_column: Option<usize>,
    pub id_offsets: Vec<i32>,
    pub id_data: Vec<u8>,
    pub columns: Vec<NumberColumn>,
}

/// What [`read_csv_predictions`] gives.
#[derive(Debug)]
pub enum CsvOutcome {
    Read(CsvPredictions),
    Declined { line: usize, reason: &'static str },
}

fn declined(line: usize, reason: &'static str) -> CsvOutcome {
    CsvOutcome::Declined { line, reason }
}

/// The rows of one block of lines.
struct Block {
    id_offsets: Vec<i32>, // relative, from 0
    id_data: Vec<u8>,
    values: Vec<Vec<f64>>,
    valid: Vec<Vec<u8>>,
    /// Per number column: some cell has a fraction or an exponent.
    real: Vec<bool>,
    lines: usize,
}

/// Read the CSV dump at `path` (uncompressed), cells split at `delimiter`, with
/// `par`'s threads. `string_columns`: the names pyarrow is told to read as strings
/// (a file with such a column other than `id` is declined).
pub fn read_csv_predictions(
    path: &std::path::Path,
    delimiter: u8,
    string_columns: &[Vec<u8>],
    par: Parallelism,
) -> std::io::Result<CsvOutcome> {
    read_csv_predictions_from(&std::fs::read(path)?, delimiter, string_columns, par)
}

/// [`read_csv_predictions`] of a dump's bytes (a file read whole, or bytes a
/// decompressor gave).
pub fn read_csv_predictions_from(
    text: &[u8],
    delimiter: u8,
    string_columns: &[Vec<u8>],
    par: Parallelism,
) -> std::io::Result<CsvOutcome> {
    if text.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Ok(declined(1, "a byte-order mark"));
    }
    if delimiter == b'"' || delimiter == b'\n' || delimiter == b'\r' {
        return Ok(declined(1, "an unusual delimiter"));
    }
    let header_end = memchr::memchr(b'\n', text).unwrap_or(text.len());
    let header = strip_cr(&text[..header_end]);
    let names: Vec<Vec<u8>> = header
        .split(|&b| b == delimiter)
        .map(<[u8]>::to_vec)
        .collect();
    if std::str::from_utf8(header).is_err() {
        return Ok(declined(1, "not UTF-8"));
    }
    if let Some(reason) = header_problem(&names, string_columns) {
        return Ok(declined(1, reason));
    }
    let id_column = names.iter().position(|n| n.as_slice() == b"id");
    let body = text.get(header_end + 1..).unwrap_or(&[]);
    let layout = Layout {
        delimiter,
        n_cells: names.len(),
        id_column,
    };
    let cuts = block_cuts_from(body, FIRST_BLOCK);
    let results = par
        .map(cuts.len() - 1, body.len() / 8, |b| {
            scan_block(&body[cuts[b]..cuts[b + 1]], &layout)
        })
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let k = layout.n_cells - usize::from(id_column.is_some());
    let mut id_offsets = vec![0i32];
    let mut id_data = Vec::new();
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); k];
    let mut valid: Vec<Vec<u8>> = vec![Vec::new(); k];
    let mut real = vec![false; k];
    let mut settled = vec![(false, false); k]; // (a number, a real number) in block 0
    let mut line_no = 1; // the header
    for (b, r) in results.into_iter().enumerate() {
        let block = match r {
            Ok(block) => block,
            Err((rel, d)) => return Ok(declined(line_no + rel, d.0)),
        };
        if id_data.len() + block.id_data.len() > i32::MAX as usize {
            return Ok(declined(line_no + 1, "more than 2 GiB of ids"));
        }
        let base = id_data.len() as i32;
        id_offsets.extend(block.id_offsets[1..].iter().map(|o| o + base));
        id_data.extend_from_slice(&block.id_data);
        for j in 0..k {
            if b == 0 {
                settled[j] = (block.valid[j].contains(&1), block.real[j]);
            }
            real[j] |= block.real[j];
            values[j].extend_from_slice(&block.values[j]);
            valid[j].extend_from_slice(&block.valid[j]);
        }
        line_no += block.lines;
    }
    if valid.first().map_or(id_offsets.len() == 1, Vec::is_empty) {
        return Ok(declined(1, "no rows"));
    }
    let mut columns = Vec::with_capacity(k);
    for j in 0..k {
        let (number, real_first) = settled[j];
        if !number {
            return Ok(declined(2, "a column without a number in the first lines"));
        }
        if real[j] && !real_first {
            return Ok(declined(2, "a column whose first lines hold only integers"));
        }
        let v = std::mem::take(&mut values[j]);
        let ok = std::mem::take(&mut valid[j]);
        columns.push(if real[j] {
            NumberColumn::Float {
                values: v,
                valid: ok,
            }
        } else {
            // integers of at most 15 digits: exact as float64 and back
            NumberColumn::Int {
                values: v.iter().map(|&x| x as i64).collect(),
                valid: ok,
            }
        });
    }
    Ok(CsvOutcome::Read(CsvPredictions {
        names,
        id_column,
        id_offsets,
        id_data,
        columns,
    }))
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Why the header is outside the subset, if it is.
fn header_problem(names: &[Vec<u8>], string_columns: &[Vec<u8>]) -> Option<&'static str> {
    for (i, n) in names.iter().enumerate() {
        if n.is_empty() {
            return Some("an empty column name");
        }
        if n.iter().any(|&b| b == b'"' || b == b'\r' || b < 0x20) {
            return Some("a quote or control character in the header");
        }
        if names[..i].contains(n) {
            return Some("a repeated column name");
        }
        if n.as_slice() != b"id" && string_columns.contains(n) {
            return Some("a column read as strings");
        }
    }
    None
}

struct Layout {
    delimiter: u8,
    n_cells: usize,
    id_column: Option<usize>,
}

/// Scan the lines of one block: its rows, or on a decline the block's 1-based
/// line of it.
fn scan_block(text: &[u8], layout: &Layout) -> Result<Block, (usize, Decline)> {
    if i32::try_from(text.len()).is_err() {
        // a line of 2 GiB or more: the block's int32 offsets could not hold it
        return Err((1, Decline("a line too long for int32 offsets")));
    }
    let k = layout.n_cells - usize::from(layout.id_column.is_some());
    let mut out = Block {
        id_offsets: vec![0],
        id_data: Vec::new(),
        values: vec![Vec::new(); k],
        valid: vec![Vec::new(); k],
        real: vec![false; k],
        lines: 0,
    };
    if std::str::from_utf8(text).is_err() {
        let n = text
            .split(|&b| b == b'\n')
            .position(|l| std::str::from_utf8(l).is_err())
            .map_or(1, |p| p + 1);
        return Err((n, Decline("not UTF-8")));
    }
    if memchr::memchr(b'"', text).is_some() {
        let n = text.split(|&b| b == b'\n').position(|l| l.contains(&b'"'));
        return Err((n.map_or(1, |p| p + 1), Decline("a quote")));
    }
    let mut start = 0;
    while start < text.len() {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |p| start + p);
        let line = strip_cr(&text[start..end]);
        start = end + 1;
        out.lines += 1;
        let n = out.lines;
        if line.is_empty() {
            continue; // pyarrow skips empty lines
        }
        if memchr::memchr(b'\r', line).is_some() {
            return Err((n, Decline("a lone carriage return")));
        }
        // cells read in place: an id up to the next delimiter, a number by its
        // grammar, which must then end at a delimiter or the line's end
        let mut pos = 0;
        let mut j = 0;
        for c in 0..layout.n_cells {
            if c > 0 {
                if line.get(pos) != Some(&layout.delimiter) {
                    return Err((n, Decline("a row with fewer cells")));
                }
                pos += 1;
            }
            let rest = &line[pos..];
            if Some(c) == layout.id_column {
                let cell = &rest[..memchr::memchr(layout.delimiter, rest).unwrap_or(rest.len())];
                if NULL_SPELLINGS.contains(&cell) {
                    return Err((n, Decline("an id pyarrow reads as null")));
                }
                out.id_data.extend_from_slice(cell);
                // a block is at most a few MiB: its relative offsets fit
                out.id_offsets.push(out.id_data.len() as i32);
                pos += cell.len();
                continue;
            }
            if rest.first().is_none_or(|&b| b == layout.delimiter) {
                out.values[j].push(0.0);
                out.valid[j].push(0);
            } else {
                let (v, end) = score_at(line, pos).map_err(|d| (n, d))?;
                if end < line.len() && line[end] != layout.delimiter {
                    return Err((n, Decline("a cell that is not a number")));
                }
                out.real[j] |= line[pos..end]
                    .iter()
                    .any(|&b| matches!(b, b'.' | b'e' | b'E'));
                out.values[j].push(v);
                out.valid[j].push(1);
                pos = end;
            }
            j += 1;
        }
        if pos != line.len() {
            return Err((n, Decline("a row with more cells")));
        }
    }
    Ok(out)
}
