//! The id table against a plain search: first occurrences, absent ids, byte-exact
//! matches (prefixes, embedded zeros), sliced offsets and both offset widths.

use super::*;

fn layout(ids: &[&[u8]]) -> (Vec<i32>, Vec<u8>) {
    let mut offsets = vec![0i32];
    let mut data = Vec::new();
    for id in ids {
        data.extend_from_slice(id);
        offsets.push(data.len() as i32);
    }
    (offsets, data)
}

fn naive(probe: &[&[u8]], set: &[&[u8]]) -> Vec<i64> {
    probe
        .iter()
        .map(|p| set.iter().position(|s| s == p).map_or(-1, |i| i as i64))
        .collect()
}

fn check(probe: &[&[u8]], set: &[&[u8]]) {
    let (po, pd) = layout(probe);
    let (so, sd) = layout(set);
    let pb = Bounds::new(&po, pd.len()).unwrap();
    let sb = Bounds::new(&so, sd.len()).unwrap();
    for par in [Parallelism::sequential(), Parallelism { threads: 2 }] {
        let got = index_in(pb.strings(&pd), sb.strings(&sd), None, par).unwrap();
        assert_eq!(got, naive(probe, set));
        let keys = sorted_keys(sb.strings(&sd), par).unwrap();
        let again = index_in(pb.strings(&pd), sb.strings(&sd), Some(&keys), par).unwrap();
        assert_eq!(again, got);
        let distinct = set.iter().enumerate().all(|(i, a)| !set[..i].contains(a));
        assert_eq!(any_repeat(sb.strings(&sd), &keys), !distinct);
    }
}

#[test]
fn exact_bytes_first_occurrence_and_absent() {
    let set: Vec<&[u8]> = vec![b"a", b"ab", b"", b"a\0", b"ab", b"0123456789abcdef", b"x"];
    let probe: Vec<&[u8]> = vec![
        b"ab",
        b"a\0",
        b"a",
        b"",
        b"zz",
        b"0123456789abcdeg",
        b"x",
        b"ab",
    ];
    check(&probe, &set);
    check(&set, &set);
    check(&[], &set);
    check(&probe, &[]);
}

#[test]
fn many_ids_in_parallel_blocks() {
    let set: Vec<Vec<u8>> = (0..200_000)
        .map(|i| format!("item-{i:07}").into_bytes())
        .collect();
    let probe: Vec<Vec<u8>> = (0..150_000)
        .map(|i| format!("item-{:07}", (i * 7919) % 250_000).into_bytes())
        .collect();
    let s: Vec<&[u8]> = set.iter().map(|v| v.as_slice()).collect();
    let p: Vec<&[u8]> = probe.iter().map(|v| v.as_slice()).collect();
    let (po, pd) = layout(&p);
    let (so, sd) = layout(&s);
    let pb = Bounds::new(&po, pd.len()).unwrap();
    let sb = Bounds::new(&so, sd.len()).unwrap();
    let got = index_in(
        pb.strings(&pd),
        sb.strings(&sd),
        None,
        Parallelism { threads: 2 },
    )
    .unwrap();
    for (i, g) in got.iter().enumerate() {
        let want = (i * 7919) % 250_000;
        assert_eq!(*g, if want < 200_000 { want as i64 } else { -1 });
    }
}

#[test]
fn sliced_and_large_offsets() {
    // an Arrow slice: offsets that start past zero, data with bytes before them
    let data = b"junkonetwothree".to_vec();
    let offsets: Vec<i64> = vec![4, 7, 10, 15];
    let b = Bounds::new(&offsets, data.len()).unwrap();
    let s = b.strings(&data);
    assert_eq!(s.len(), 3);
    assert_eq!(s.get(2), b"three");
    let (po, pd) = layout(&[b"three", b"junk", b"one"]);
    let pb = Bounds::new(&po, pd.len()).unwrap();
    let got = index_in(pb.strings(&pd), s, None, Parallelism::sequential()).unwrap();
    assert_eq!(got, vec![2, -1, 0]);
}

#[test]
fn bad_offsets_are_errors() {
    assert!(Bounds::new::<i32>(&[], 0).is_err());
    assert!(Bounds::new(&[0i32, -1], 4).is_err());
    assert!(Bounds::new(&[0i32, 3, 2], 4).is_err());
    assert!(Bounds::new(&[0i64, 5], 4).is_err());
    assert!(Bounds::new(&[0i32, 4], 4).is_ok());
}

#[test]
fn colliding_hashes_are_told_apart_by_bytes() {
    // every id under the same hash: the walk must compare the bytes
    let set: Vec<&[u8]> = vec![b"p", b"q", b"r", b"q"];
    let probe: Vec<&[u8]> = vec![b"r", b"z", b"q"];
    let (so, sd) = layout(&set);
    let (po, pd) = layout(&probe);
    let sb = Bounds::new(&so, sd.len()).unwrap();
    let pb = Bounds::new(&po, pd.len()).unwrap();
    let same = 42u64 << 32;
    let ks: Vec<u64> = (0..4).map(|r| same | r).collect();
    let kp: Vec<u64> = (0..3).map(|r| same | r).collect();
    let got = join_sorted(pb.strings(&pd), sb.strings(&sd), &kp, &ks);
    assert_eq!(got, vec![2, -1, 1]);
    assert!(any_repeat(sb.strings(&sd), &ks)); // "q" twice
    assert!(!any_repeat(pb.strings(&pd), &kp));
    assert!(check_keys(sb.strings(&sd), &kp).is_err()); // too few
    assert!(check_keys(sb.strings(&sd), &[3, 2, 1, 0]).is_err()); // not ascending
    assert!(check_keys(sb.strings(&sd), &[0, 1, 2, 9]).is_err()); // row out of range
}
