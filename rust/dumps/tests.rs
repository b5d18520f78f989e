//! The scanner against hand-written lines; the Python tests compare the whole
//! reader with pyarrow's on generated dumps.

use super::line::{scan, Decline, Id, IdKind, ScoreForm, Scores};
use super::number::parse_score;
use super::*;

fn fields(names: &[&str]) -> ScoreForm {
    ScoreForm::Fields(names.iter().map(|n| n.as_bytes().to_vec()).collect())
}

#[test]
fn object_scores_in_any_order_with_nulls() {
    let f = fields(&["a", "b"]);
    let l = scan(
        br#" {"scores": {"b": 1e-3, "a": null}, "id": "q1"} "#,
        Some(IdKind::Str),
        Some(&f),
    )
    .unwrap();
    assert_eq!(l.id, Id::Str(b"q1"));
    assert!(!l.id_first);
    assert_eq!(l.scores, Scores::Fields(vec![(1, Some(1e-3)), (0, None)]));
}

#[test]
fn vectors_and_int_ids() {
    let l = scan(
        br#"{"id": -7, "scores": [0, 0.5, 1E2]}"#,
        None,
        Some(&ScoreForm::Vector),
    )
    .unwrap();
    assert_eq!(l.id, Id::Int(-7));
    assert_eq!(l.scores, Scores::Vector(vec![0.0, 0.5, 100.0]));
}

#[test]
fn what_is_declined() {
    let f = fields(&["a"]);
    for line in [
        &br#"{"id": "q\"1", "scores": {"a": 1}}"#[..],
        br#"{"id": "q", "scores": {"a": 1}, "x": 1}"#,
        br#"{"id": "q", "scores": {"a": 1, "a": 2}}"#,
        br#"{"id": "q", "scores": {"b": 1}}"#,
        br#"{"id": "q", "scores": {"a": 01}}"#,
        br#"{"id": "q", "scores": {"a": 1.}}"#,
        br#"{"id": "q", "scores": {"a": NaN}}"#,
        br#"{"id": "q", "scores": {"a": 1e999}}"#,
        br#"{"id": "q", "scores": {"a": "0.5"}}"#,
        br#"{"id": "q", "scores": [1]}"#,
        br#"{"id": "q", "scores": {"a": 1}} x"#,
        br#"{"id": "q", "scores": {"a": 1}"#,
        br#"{"id": 1, "scores": {"a": 1}}"#,
        br#"{"id": null, "scores": {"a": 1}}"#,
        br#"{"scores": {"a": 1}}"#,
        br#"["q", {"a": 1}]"#,
    ] {
        let r = scan(line, Some(IdKind::Str), Some(&f));
        assert!(r.is_err(), "{}", String::from_utf8_lossy(line));
    }
    assert_eq!(
        scan(
            br#"{"id": 99999999999999999999, "scores": null}"#,
            None,
            None
        )
        .unwrap_err(),
        Decline("an id beyond 64 bits")
    );
}

#[test]
fn whole_file_blocks_and_declines() {
    let dir = std::env::temp_dir().join(format!("toxeval-dumps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.jsonl");
    let mut text = String::from("{\"id\": \"x\", \"scores\": null}\n\n");
    for i in 0..200_000 {
        text.push_str(&format!(
            "{{\"id\": \"r{i}\", \"scores\": {{\"a\": {}, \"b\": 0.25}}}}\n",
            i % 7
        ));
    }
    std::fs::write(&path, &text).unwrap();
    let par = Parallelism::new(Some(2)).unwrap();
    let Outcome::Read(r) = read_jsonl_predictions(&path, par).unwrap() else {
        panic!("declined")
    };
    assert_eq!(r.row_valid.len(), 200_001);
    assert_eq!(r.row_valid[0], 0);
    let ScoreColumn::Fields { values, valid, .. } = &r.scores else {
        panic!()
    };
    assert_eq!(values[0][200_000], (199_999 % 7) as f64);
    assert_eq!(valid[1][0], 0);
    let IdColumn::Str { offsets, data } = &r.ids else {
        panic!()
    };
    assert_eq!(&data[offsets[1] as usize..offsets[2] as usize], b"r0");
    // the same with a bad line far in: declined with its line number
    text.push_str("{\"id\": \"z\", \"scores\": {\"a\": true}}\n");
    std::fs::write(&path, &text).unwrap();
    match read_jsonl_predictions(&path, par).unwrap() {
        Outcome::Declined { line, .. } => assert_eq!(line, 200_003),
        Outcome::Read(_) => panic!("read a boolean score"),
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// xorshift64: the same pseudo-random sequence on every run.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn short_decimals_are_parsed_exactly() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..200_000 {
        let state = next(&mut state);
        let digits = 1 + (state % 15) as usize;
        let frac = (state >> 8) as usize % 20;
        let m = (state >> 20) % 10u64.pow(digits as u32);
        let mut s = m.to_string();
        if frac > 0 {
            while s.len() <= frac {
                s.insert(0, '0');
            }
            s.insert(s.len() - frac, '.');
        }
        if state & 1 == 1 {
            s.insert(0, '-');
        }
        let want: f64 = s.parse().unwrap();
        let got = parse_score(s.as_bytes()).unwrap();
        assert_eq!(got.to_bits(), want.to_bits(), "{s}");
    }
}

/// Random JSON numbers of every shape (1 to 25 significant digits, leading zeros
/// in the fraction, exponents from -330 to 330 either case and sign): the value
/// is `str::parse::<f64>`'s to the bit, or a decline exactly where the reader
/// promises one (an integer of more than 15 digits, a value beyond float64).
#[test]
fn scores_parse_as_std_does() {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..300_000 {
        let r = next(&mut state);
        let int_len = (r % 20) as usize;
        let frac_len = ((r >> 5) % 22) as usize;
        let mut s = String::new();
        if r >> 10 & 1 == 1 {
            s.push('-');
        }
        let mut d = next(&mut state);
        let mut digit = |first: bool| {
            d = d.rotate_left(5) ^ 0x9E37_79B9;
            let v = (d % 10) as u8;
            char::from(b'0' + if first { 1 + v % 9 } else { v })
        };
        if int_len == 0 {
            s.push('0');
        } else {
            for i in 0..int_len {
                s.push(digit(i == 0));
            }
        }
        if frac_len > 0 && r >> 11 & 3 != 0 {
            s.push('.');
            for _ in 0..frac_len {
                s.push(digit(false));
            }
        }
        if r >> 13 & 3 == 0 {
            s.push(if r >> 15 & 1 == 1 { 'e' } else { 'E' });
            match r >> 16 & 3 {
                0 => s.push('-'),
                1 => s.push('+'),
                _ => {}
            }
            s.push_str(&((r >> 20) % 331).to_string());
        }
        let want: f64 = s.parse().unwrap();
        let real = s.contains(['.', 'e', 'E']);
        let long_int = !real && s.trim_start_matches('-').len() > 15;
        match parse_score(s.as_bytes()) {
            Ok(got) => {
                assert!(!long_int, "{s}: a long integer read");
                assert_eq!(got.to_bits(), want.to_bits(), "{s}");
            }
            Err(Decline(why)) => {
                assert!(long_int || !want.is_finite(), "{s}: declined ({why})");
            }
        }
    }
    for bad in ["1.", ".5", "01", "1e", "1e+", "+1", "--1", "0x1", "1.5.2"] {
        assert!(parse_score(bad.as_bytes()).is_err(), "{bad}");
    }
}

#[test]
fn csv_columns_types_and_declines() {
    use super::csv::{read_csv_predictions, CsvOutcome, NumberColumn};
    let dir = std::env::temp_dir().join(format!("toxeval-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.csv");
    let strings = vec![b"labels".to_vec()];
    let par = Parallelism::new(Some(2)).unwrap();
    let mut text = String::from("a,id,b\r\n0.5,q0,1\r\n\r\n");
    for i in 1..100_000 {
        text.push_str(&format!(",q{i},{}\n", i % 3));
    }
    std::fs::write(&path, &text).unwrap();
    let CsvOutcome::Read(r) = read_csv_predictions(&path, b',', &strings, par).unwrap() else {
        panic!("declined")
    };
    assert_eq!(r.id_column, Some(1));
    assert_eq!(r.id_offsets.len(), 100_001);
    assert_eq!(
        &r.id_data[r.id_offsets[1] as usize..r.id_offsets[2] as usize],
        b"q1"
    );
    let NumberColumn::Float { values, valid } = &r.columns[0] else {
        panic!("a is float64")
    };
    assert_eq!((values[0], valid[0], valid[1]), (0.5, 1, 0));
    let NumberColumn::Int { values, .. } = &r.columns[1] else {
        panic!("b is int64")
    };
    assert_eq!(values[99_999], 99_999 % 3);
    for (bad, line) in [
        ("id,a\nq,0.5\nr,\"1\"\n", 3),
        ("id,a\nq,0.5\nNA,1\n", 3),
        ("id,labels\nq,x\n", 1),
        ("id,a\nq,0.5,1\n", 2),
        ("id,a\nq,nan\n", 2),
    ] {
        std::fs::write(&path, bad).unwrap();
        match read_csv_predictions(&path, b',', &strings, par).unwrap() {
            CsvOutcome::Declined { line: l, .. } => assert_eq!(l, line, "{bad}"),
            CsvOutcome::Read(_) => panic!("read {bad}"),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
