//! One JSONL dataset line, scanned in place: `{"id": ..., "text": "...",
//! "labels": ["cat", ...]}` (keys in any order, each once, no other key) with the
//! id a string or a 64-bit integer. Strings may hold JSON escapes, which are
//! decoded (`\uD83D\uDE00` pairs included); a lone surrogate, a raw control
//! character, a number JSON does not write as an integer, another key or value
//! form: each is a *decline* (`Err(Decline)`), and the caller hands the file to the
//! general reader, which reads it or names the problem.

pub use crate::json_cursor::is_blank;
pub use crate::json_cursor::Decline;
use crate::json_cursor::{Cursor, R};

/// An id as it appears on a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    /// A string: its decoded bytes are the last ones pushed to the id buffer.
    Str,
    Int(i64),
}

/// Where one line's values go: decoded strings are appended to the buffers, and
/// `label` is called with each decoded label string.
pub struct Sinks<'a> {
    pub id_data: &'a mut Vec<u8>,
    pub text_data: &'a mut Vec<u8>,
    /// Scratch for one label string.
    pub label: &'a mut Vec<u8>,
}

impl<'a> Cursor<'a> {
    /// A string value, decoded and appended to `out`.
    fn decoded_string(&mut self, out: &mut Vec<u8>) -> R<()> {
        self.expect(b'"')?;
        loop {
            let start = self.i;
            while let Some(&b) = self.s.get(self.i) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.extend_from_slice(&self.s[start..self.i]);
            match self.s.get(self.i) {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.escape(out)?;
                }
                Some(_) => return Err(Decline("a control character in a string")),
                None => return Err(Decline("a line ends early")),
            }
        }
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> R<()> {
        let c = *self.s.get(self.i).ok_or(Decline("a line ends early"))?;
        self.i += 1;
        let byte = match c {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let hi = self.hex4()?;
                let code = if (0xD800..0xDC00).contains(&hi) {
                    if self.s.get(self.i..self.i + 2) != Some(b"\\u") {
                        return Err(Decline("a lone surrogate"));
                    }
                    self.i += 2;
                    let lo = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return Err(Decline("a lone surrogate"));
                    }
                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                } else if (0xDC00..0xE000).contains(&hi) {
                    return Err(Decline("a lone surrogate"));
                } else {
                    hi
                };
                let ch = char::from_u32(code).ok_or(Decline("a lone surrogate"))?;
                let mut utf8 = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes());
                return Ok(());
            }
            _ => return Err(Decline("an invalid escape")),
        };
        out.push(byte);
        Ok(())
    }

    fn hex4(&mut self) -> R<u32> {
        let digits = self
            .s
            .get(self.i..self.i + 4)
            .ok_or(Decline("a line ends early"))?;
        let mut v = 0u32;
        for &d in digits {
            let x = (d as char)
                .to_digit(16)
                .ok_or(Decline("an invalid escape"))?;
            v = v * 16 + x;
        }
        self.i += 4;
        Ok(v)
    }

    /// An integer as JSON writes one (`-?(0|[1-9][0-9]*)`, no fraction or
    /// exponent) that fits in i64.
    fn integer(&mut self) -> R<i64> {
        self.ws();
        let start = self.i;
        let neg = self.s.get(self.i) == Some(&b'-');
        if neg {
            self.i += 1;
        }
        let digits_start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        let digits = &self.s[digits_start..self.i];
        if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
            return Err(Decline("an id that is no JSON integer"));
        }
        if matches!(self.s.get(self.i), Some(b'.' | b'e' | b'E')) {
            return Err(Decline("an id that is not an integer"));
        }
        if neg && digits == b"0" {
            return Err(Decline("an id of -0"));
        }
        // the digits are ASCII, so this is valid UTF-8
        let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| Decline("not UTF-8"))?;
        text.parse::<i64>()
            .map_err(|_| Decline("an id beyond 64-bit integers"))
    }
}

/// Scan one non-blank line. `id_kind` is the first line's (None on the first
/// line): a line whose id has the other kind is declined. The id's string bytes
/// go to `sinks.id_data`, the text's to `sinks.text_data`, each label string to
/// `label(bytes)`; on a decline the buffers may hold part of the line.
pub fn scan(
    line: &[u8],
    id_kind: Option<bool>,
    sinks: &mut Sinks<'_>,
    label: &mut dyn FnMut(&[u8]),
) -> R<Id> {
    let mut c = Cursor { s: line, i: 0 };
    c.expect(b'{')?;
    let (mut id, mut text, mut labels) = (None, false, false);
    loop {
        let key = c.plain_string()?; // the three names need no escape
        c.expect(b':')?;
        match key {
            b"id" if id.is_none() => {
                id = Some(if c.peek()? == b'"' {
                    c.decoded_string(sinks.id_data)?;
                    Id::Str
                } else {
                    Id::Int(c.integer()?)
                });
            }
            b"text" if !text => {
                c.decoded_string(sinks.text_data)?;
                text = true;
            }
            b"labels" if !labels => {
                c.expect(b'[')?;
                if c.peek()? == b']' {
                    c.i += 1;
                } else {
                    loop {
                        sinks.label.clear();
                        c.decoded_string(sinks.label)?;
                        label(sinks.label);
                        match c.peek()? {
                            b',' => c.i += 1,
                            b']' => {
                                c.i += 1;
                                break;
                            }
                            _ => return Err(Decline("not the expected JSON")),
                        }
                    }
                }
                labels = true;
            }
            b"id" | b"text" | b"labels" => return Err(Decline("a repeated key")),
            _ => return Err(Decline("another field")),
        }
        if !c.member_end()? {
            break;
        }
    }
    c.at_end()?;
    let id = id.ok_or(Decline("a line without an id"))?;
    if !text || !labels {
        return Err(Decline("a line without text or labels"));
    }
    if let Some(want_str) = id_kind {
        if want_str != matches!(id, Id::Str) {
            return Err(Decline("ids of two kinds"));
        }
    }
    Ok(id)
}
