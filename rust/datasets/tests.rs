use super::*;

fn read(body: &[u8]) -> Outcome {
    read_jsonl_dataset(body, Parallelism::sequential())
}

fn data(body: &[u8]) -> JsonlDataset {
    match read(body) {
        Outcome::Read(d) => d,
        other => panic!("declined: {other:?}"),
    }
}

fn reason(body: &[u8]) -> (usize, &'static str) {
    match read(body) {
        Outcome::Declined { line, reason } => (line, reason),
        Outcome::Read(_) => panic!("read"),
    }
}

#[test]
fn reads_string_ids_texts_and_label_codes() {
    let d = data(b"{\"id\":\"a\",\"text\":\"x\",\"labels\":[\"hate\",\"sex\"]}\n{\"labels\":[], \"text\":\"yy\", \"id\":\"b\"}\n{\"id\":\"c\",\"text\":\"\",\"labels\":[\"sex\"]}");
    assert_eq!(
        d.ids,
        IdColumn::Str {
            offsets: vec![0, 1, 2, 3],
            data: b"abc".to_vec()
        }
    );
    assert_eq!(d.text_offsets, vec![0, 1, 3, 3]);
    assert_eq!(d.text_data, b"xyy".to_vec());
    assert_eq!(d.label_offsets, vec![0, 2, 2, 3]);
    assert_eq!(d.label_codes, vec![0, 1, 1]);
    assert_eq!(d.dict_offsets, vec![0, 4, 7]);
    assert_eq!(d.dict_data, b"hatesex".to_vec());
}

#[test]
fn decodes_escapes_and_surrogate_pairs() {
    let d = data(b"{\"id\":7,\"text\":\"a\\\"b\\n\\u00e9\\ud83d\\ude00\\/\",\"labels\":[\"h\\u0061te\"]}\r\n");
    assert_eq!(d.ids, IdColumn::Int(vec![7]));
    assert_eq!(d.text_data, "a\"b\né\u{1F600}/".as_bytes().to_vec());
    assert_eq!(d.dict_data, b"hate".to_vec());
}

#[test]
fn declines_what_it_does_not_cover() {
    let cases: &[&[u8]] = &[
        b"{\"id\":\"a\",\"text\":\"x\",\"labels\":[\"h\"],\"lang\":\"en\"}\n",
        b"{\"id\":\"a\",\"text\":\"x\",\"labels\":{\"h\":1}}\n",
        b"{\"id\":\"a\",\"text\":\"x\",\"labels\":[1,0]}\n",
        b"{\"id\":\"a\",\"text\":\"x\",\"labels\":null}\n",
        b"{\"id\":1.0,\"text\":\"x\",\"labels\":[]}\n",
        b"{\"id\":01,\"text\":\"x\",\"labels\":[]}\n",
        b"{\"id\":99999999999999999999,\"text\":\"x\",\"labels\":[]}\n",
        b"{\"id\":\"a\",\"text\":\"\\ud800\",\"labels\":[]}\n",
        b"{\"id\":\"a\",\"text\":\"\\udc00x\",\"labels\":[]}\n",
        b"{\"id\":\"a\",\"text\":\"a\tb\",\"labels\":[]}\n",
        b"{\"id\":\"a\",\"text\":\"x\",\"labels\":[],\"id\":\"b\"}\n",
        b"{\"id\":\"a\",\"text\":\"x\"}\n",
        b"{\"id\":\"a\",\"text\":\"x\",\"labels\":[]} x\n",
        b"{\"id\":\"a\",\"text\":\"x\",\"labels\":[\"h\",]}\n",
        b"\xEF\xBB\xBF{\"id\":\"a\",\"text\":\"x\",\"labels\":[]}\n",
        b"{\"id\":\"a\",\"text\":\"\xff\",\"labels\":[]}\n",
        b"",
        b"\n",
    ];
    for case in cases {
        assert!(
            matches!(read(case), Outcome::Declined { .. }),
            "{}",
            String::from_utf8_lossy(case)
        );
    }
}

#[test]
fn names_the_line_it_declines() {
    let body = b"{\"id\":\"a\",\"text\":\"x\",\"labels\":[]}\n\n{\"id\":\"b\",\"text\":\"x\",\"labels\":[]}\n";
    assert_eq!(reason(body), (2, "a blank line"));
    let body =
        b"{\"id\":\"a\",\"text\":\"x\",\"labels\":[]}\n{\"id\":2,\"text\":\"x\",\"labels\":[]}\n";
    assert_eq!(reason(body), (2, "ids of two kinds"));
}

#[test]
fn many_blocks_give_what_one_thread_gives() {
    let mut body = Vec::new();
    for i in 0..60_000 {
        let labels = match i % 3 {
            0 => "[]".to_string(),
            1 => format!("[\"c{}\"]", i % 7),
            _ => format!("[\"c{}\",\"d{}\"]", i % 5, i % 11),
        };
        body.extend_from_slice(
            format!("{{\"id\":\"r{i}\",\"text\":\"text {i} \\u00e9\",\"labels\":{labels}}}\n")
                .as_bytes(),
        );
    }
    assert!(body.len() > 2 * BLOCK);
    let one = read_jsonl_dataset(&body, Parallelism::sequential());
    let many = read_jsonl_dataset(&body, Parallelism { threads: 4 });
    assert_eq!(one, many);
    let Outcome::Read(d) = one else {
        panic!("declined")
    };
    assert_eq!(d.text_offsets.len(), 60_001);
    assert_eq!(
        *d.label_offsets.last().unwrap() as usize,
        d.label_codes.len()
    );
    // a line late in the file is named by its number in the file
    let mut bad = body.clone();
    bad.extend_from_slice(b"{\"id\":\"z\",\"text\":\"x\",\"labels\":[1]}\n");
    assert_eq!(
        read_jsonl_dataset(&bad, Parallelism { threads: 4 }),
        Outcome::Declined {
            line: 60_001,
            reason: "an unexpected character"
        }
    );
}
