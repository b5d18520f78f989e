//! Native reader for JSONL datasets of the common form: one object per line,
//! `{"id": "q1", "text": "...", "labels": ["hate", ...]}` (see `line.rs` for the
//! exact subset), read from the (decompressed) bytes in memory.
//!
//! The bytes are cut into blocks of whole lines scanned in parallel
//! (`parallel::Parallelism::map`, results in block order, so the output never
//! depends on the thread count) into Arrow's layouts: the id column (strings or
//! int64), the text column, and the label lists as int32 offsets into int32 codes
//! of a dictionary of the distinct label strings (in order of first appearance).
//! On anything outside the subset (a blank line, a byte-order mark, invalid
//! UTF-8, another field or label form, ids of two kinds, ...) the whole file is
//! *declined* and the caller reads it with its general reader, which also owns
//! every error message: this reader returns data or a decline, never an error.

mod line;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub use line::Decline;
use line::{is_blank, scan, Id, Sinks};

use crate::parallel::Parallelism;

/// Bytes per unit of parallel work (cut at newlines).
const BLOCK: usize = 1 << 20;

/// A multiply-rotate hash (as rustc's FxHash) for the label dictionary: its keys
/// are a few short strings looked up once per label, where SipHash's protection
/// against crafted collisions buys nothing (a file has few distinct labels).
#[derive(Default)]
struct LabelHasher(u64);

impl Hasher for LabelHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word))
                .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type LabelIndex = HashMap<Vec<u8>, i32, BuildHasherDefault<LabelHasher>>;

/// The id column: Arrow's string layout (int32 offsets into UTF-8 bytes) or int64.
#[derive(Debug, PartialEq)]
pub enum IdColumn {
    Str { offsets: Vec<i32>, data: Vec<u8> },
    Int(Vec<i64>),
}

/// A dataset read by this reader, in Arrow's layouts.
#[derive(Debug, PartialEq)]
pub struct JsonlDataset {
    pub ids: IdColumn,
    pub text_offsets: Vec<i32>,
    pub text_data: Vec<u8>,
    /// Row `i`'s labels are `label_codes[label_offsets[i]..label_offsets[i + 1]]`.
    pub label_offsets: Vec<i32>,
    /// Indices into the dictionary.
    pub label_codes: Vec<i32>,
    /// The distinct label strings, in order of first appearance (string layout).
    pub dict_offsets: Vec<i32>,
    pub dict_data: Vec<u8>,
}

/// What [`read_jsonl_dataset`] gives: the data, or why the file is left to the
/// general reader (1-based line).
#[derive(Debug, PartialEq)]
pub enum Outcome {
    Read(JsonlDataset),
    Declined { line: usize, reason: &'static str },
}

/// The rows of one block of lines, offsets relative to the block.
#[derive(Default)]
struct Block {
    lines: usize,
    id_str: Option<bool>,
    ids_int: Vec<i64>,
    id_offsets: Vec<i32>,
    id_data: Vec<u8>,
    text_offsets: Vec<i32>,
    text_data: Vec<u8>,
    label_offsets: Vec<i32>,
    label_codes: Vec<i32>,
    dict: Vec<Vec<u8>>,
}

/// Read the JSONL dataset `body` (uncompressed bytes) with `par`'s threads.
pub fn read_jsonl_dataset(body: &[u8], par: Parallelism) -> Outcome {
    if body.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return declined(1, "a byte-order mark");
    }
    let cuts = block_cuts(body);
    let n_blocks = cuts.len() - 1;
    let results = par.map(n_blocks, body.len() / 8, |b| {
        scan_block(&body[cuts[b]..cuts[b + 1]], b + 1 == n_blocks)
    });
    let results = match results {
        Ok(r) => r,
        Err(_) => return declined(1, "no thread pool"),
    };
    let mut lines_before = 0usize;
    let mut blocks = Vec::with_capacity(results.len());
    for r in results {
        match r {
            Ok(block) => {
                lines_before += block.lines;
                blocks.push(block);
            }
            Err((rel_line, d)) => return declined(lines_before + rel_line, d.0),
        }
    }
    merge(blocks)
}

fn declined(line: usize, reason: &'static str) -> Outcome {
    Outcome::Declined { line, reason }
}

/// Block boundaries in `text`: about every `BLOCK` bytes, just after a newline.
fn block_cuts(text: &[u8]) -> Vec<usize> {
    let mut cuts = vec![0];
    let mut at = 0;
    while at + BLOCK < text.len() {
        match text[at + BLOCK..].iter().position(|&b| b == b'\n') {
            Some(p) if at + BLOCK + p + 1 < text.len() => {
                at += BLOCK + p + 1;
                cuts.push(at);
            }
            _ => break,
        }
    }
    cuts.push(text.len());
    cuts
}

/// Scan the lines of one block (`last`: the file's last block, whose final
/// newline may end the file). On a decline, the block's 1-based line of it.
fn scan_block(text: &[u8], last: bool) -> Result<Block, (usize, Decline)> {
    if i32::try_from(text.len()).is_err() {
        // a line of 2 GiB or more: the block's int32 offsets could not hold it
        return Err((1, Decline("a line too long for int32 offsets")));
    }
    if let Err(e) = std::str::from_utf8(text) {
        let line = 1 + text[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        return Err((line, Decline("not UTF-8")));
    }
    let mut out = Block {
        id_offsets: vec![0],
        text_offsets: vec![0],
        label_offsets: vec![0],
        ..Block::default()
    };
    let body = match text.strip_suffix(b"\n") {
        Some(b) => b,
        None if last => text,
        None => return Err((1, Decline("a block without a newline"))),
    };
    let mut index = LabelIndex::default();
    let mut scratch = Vec::new();
    for (n, line) in body.split(|&b| b == b'\n').enumerate() {
        out.lines += 1;
        if is_blank(line) {
            return Err((n + 1, Decline("a blank line")));
        }
        let id_kind = out.id_str;
        let Block {
            id_data,
            text_data,
            label_codes,
            dict,
            ..
        } = &mut out;
        let mut sinks = Sinks {
            id_data,
            text_data,
            label: &mut scratch,
        };
        let mut on_label = |s: &[u8]| {
            let code = match index.get(s) {
                Some(&c) => c,
                None => {
                    let c = dict.len() as i32;
                    dict.push(s.to_vec());
                    index.insert(s.to_vec(), c);
                    c
                }
            };
            label_codes.push(code);
        };
        let id = scan(line, id_kind, &mut sinks, &mut on_label).map_err(|d| (n + 1, d))?;
        // the block is under 2 GiB (checked above): its relative offsets fit in i32
        match id {
            Id::Str => {
                out.id_str = Some(true);
                out.id_offsets.push(out.id_data.len() as i32);
            }
            Id::Int(v) => {
                out.id_str = Some(false);
                out.ids_int.push(v);
            }
        }
        out.text_offsets.push(out.text_data.len() as i32);
        out.label_offsets.push(out.label_codes.len() as i32);
    }
    Ok(out)
}

/// Append `offsets[1..]` shifted by `base`; false past `i32::MAX`.
fn extend_offsets(mine: &mut Vec<i32>, theirs: &[i32], base: usize) -> bool {
    let last = base + theirs.last().copied().unwrap_or(0) as usize;
    if last > i32::MAX as usize {
        return false;
    }
    let base = base as i32;
    mine.extend(theirs[1..].iter().map(|o| o + base));
    true
}

/// The blocks' rows in block order, with one dictionary for all blocks.
fn merge(blocks: Vec<Block>) -> Outcome {
    let mut id_str = None;
    let mut out = JsonlDataset {
        ids: IdColumn::Int(Vec::new()),
        text_offsets: vec![0],
        text_data: Vec::new(),
        label_offsets: vec![0],
        label_codes: Vec::new(),
        dict_offsets: vec![0],
        dict_data: Vec::new(),
    };
    let (mut ids_int, mut id_offsets, mut id_data) = (Vec::new(), vec![0i32], Vec::new());
    let mut index = LabelIndex::default();
    let mut line = 1usize;
    for block in blocks {
        if block.lines == 0 {
            continue;
        }
        match (id_str, block.id_str) {
            (Some(a), Some(b)) if a != b => return declined(line, "ids of two kinds"),
            (None, b) => id_str = b,
            _ => {}
        }
        let ok = extend_offsets(&mut id_offsets, &block.id_offsets, id_data.len())
            && extend_offsets(
                &mut out.text_offsets,
                &block.text_offsets,
                out.text_data.len(),
            )
            && extend_offsets(
                &mut out.label_offsets,
                &block.label_offsets,
                out.label_codes.len(),
            );
        if !ok {
            return declined(line, "more than 2 GiB of ids, texts or labels");
        }
        id_data.extend_from_slice(&block.id_data);
        ids_int.extend_from_slice(&block.ids_int);
        out.text_data.extend_from_slice(&block.text_data);
        let remap: Vec<i32> = block
            .dict
            .into_iter()
            .map(|s| {
                let next = index.len() as i32;
                *index.entry(s).or_insert(next)
            })
            .collect();
        out.label_codes
            .extend(block.label_codes.iter().map(|&c| remap[c as usize]));
        line += block.lines;
    }
    if out.text_offsets.len() == 1 {
        return declined(1, "no rows");
    }
    let mut dict: Vec<(i32, Vec<u8>)> = index.into_iter().map(|(s, c)| (c, s)).collect();
    dict.sort_unstable_by_key(|(c, _)| *c);
    for (_, s) in dict {
        if out.dict_data.len() + s.len() > i32::MAX as usize {
            return declined(1, "more than 2 GiB of label names");
        }
        out.dict_data.extend_from_slice(&s);
        out.dict_offsets.push(out.dict_data.len() as i32);
    }
    out.ids = if id_str == Some(true) {
        IdColumn::Str {
            offsets: id_offsets,
            data: id_data,
        }
    } else {
        IdColumn::Int(ids_int)
    };
    Outcome::Read(out)
}

#[cfg(test)]
mod tests;
