//! The scanner against hand-written lines; the Python tests compare the whole
//! reader with pyarrow's on generated dumps.

use super::line::{exact_short_decimal, scan, Decline, Id, IdKind, ScoreForm, Scores};
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

#[test]
fn short_decimals_are_parsed_exactly() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..200_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
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
        let got = exact_short_decimal(s.as_bytes()).unwrap();
        assert_eq!(got.to_bits(), want.to_bits(), "{s}");
    }
    assert_eq!(exact_short_decimal(b"1e5"), None);
    assert_eq!(exact_short_decimal(b"1234567890123456"), None);
}
