//! What the native JSONL readers (`datasets/`, `dumps/`) share to scan one line in
//! place: the decline type (a line outside a reader's subset, handed whole to the
//! general reader), JSON whitespace, and a byte cursor with the steps every scanner
//! takes (skip whitespace, look at the next byte, require one). Each reader adds its
//! own steps (keys, strings, numbers) in its `line.rs`.

/// Why a line was not read by a native reader (for tests and notes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decline(pub &'static str);

/// A scanning step's result.
pub type R<T> = Result<T, Decline>;

/// JSON whitespace.
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// True when `line` holds only JSON whitespace (a blank line).
pub fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| is_ws(b))
}

/// A position in one line.
pub struct Cursor<'a> {
    pub s: &'a [u8],
    pub i: usize,
}

impl<'a> Cursor<'a> {
    /// Skip JSON whitespace.
    pub fn ws(&mut self) {
        while self.i < self.s.len() && is_ws(self.s[self.i]) {
            self.i += 1;
        }
    }

    /// The next byte after whitespace (not consumed).
    pub fn peek(&mut self) -> R<u8> {
        self.ws();
        self.s
            .get(self.i)
            .copied()
            .ok_or(Decline("a line ends early"))
    }

    /// Consume byte `b` after whitespace, or decline.
    pub fn expect(&mut self, b: u8) -> R<()> {
        if self.peek()? == b {
            self.i += 1;
            Ok(())
        } else {
            Err(Decline("an unexpected character"))
        }
    }

    /// After an object's member: `true` on `,` (another member follows), `false` on
    /// `}` (the object ends); anything else declines.
    pub fn member_end(&mut self) -> R<bool> {
        match self.peek()? {
            b',' => {
                self.i += 1;
                Ok(true)
            }
            b'}' => {
                self.i += 1;
                Ok(false)
            }
            _ => Err(Decline("an unexpected character")),
        }
    }

    /// Only whitespace is left on the line.
    pub fn at_end(&mut self) -> R<()> {
        self.ws();
        if self.i == self.s.len() {
            Ok(())
        } else {
            Err(Decline("more after the object"))
        }
    }

    /// A string without escapes or control characters (keys, plain ids), in place;
    /// UTF-8 is checked by the caller per block.
    pub fn plain_string(&mut self) -> R<&'a [u8]> {
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
        Err(Decline("a line ends early"))
    }
}
