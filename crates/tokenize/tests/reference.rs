//! Conformance with the reference (transformers 5.24.0 and its `tokenizers`) on the committed
//! sample tokenizer: `crates/tokenize/tests/data/tokenizer/cases.json`,
//! written by `tools/tokenizer/reference.py` (CI has no Python); the TextStreamer on every kind
//! of decoder: `streamer.json`, written by `tools/tokenizer/streamer.py`. The `hostile` module
//! holds the generated tokenizer files that must neither crash rtbench nor make it grow text
//! without bound, and the streamer's linearity.

use std::path::{Path, PathBuf};

#[path = "reference/hostile.rs"]
mod hostile;

use rtbench_tokenize::{ModelTokenizer, StreamDecoder, streamer_pieces};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tokenizer() -> ModelTokenizer {
    ModelTokenizer::from_file(&root().join("samples/tokenizer/tokenizer.json")).unwrap()
}

struct Case {
    name: String,
    text: String,
    ids: Vec<u32>,
    offsets: Vec<(usize, usize)>,
    decoded: String,
    cuts: Vec<(usize, usize, String)>,
    stream: Vec<String>,
    streamer: Vec<String>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn cases() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tokenizer/cases.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let data: Value = serde_json::from_str(&text).unwrap();
    data["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().to_string(),
            text: c["text"].as_str().unwrap().to_string(),
            ids: c["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap() as u32)
                .collect(),
            offsets: c["offsets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    (
                        o[0].as_u64().unwrap() as usize,
                        o[1].as_u64().unwrap() as usize,
                    )
                })
                .collect(),
            decoded: c["decoded"].as_str().unwrap().to_string(),
            cuts: c["cuts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| {
                    (
                        k["start"].as_u64().unwrap() as usize,
                        k["end"].as_u64().unwrap() as usize,
                        k["decoded"].as_str().unwrap().to_string(),
                    )
                })
                .collect(),
            stream: strings(&c["stream"]),
            streamer: strings(&c["streamer"]),
        })
        .collect()
}

/// A character offset of `text` as a byte offset.
fn byte_offset(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

#[test]
fn the_reference_covers_the_samples_and_split_characters() {
    let cases = cases();
    assert!(cases.len() > 100, "{} cases", cases.len());
    assert!(cases.iter().filter(|c| !c.cuts.is_empty()).count() > 10);
}

#[test]
fn encode_matches_the_reference() {
    let tok = tokenizer();
    let mut failures = Vec::new();
    for case in cases() {
        let tokens = tok.encode(&case.text).unwrap();
        let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
        if ids != case.ids {
            failures.push(format!(
                "{}: ids {ids:?}\n  reference {:?}",
                case.name, case.ids
            ));
            continue;
        }
        let expected: Vec<_> = case
            .offsets
            .iter()
            .map(|&(s, e)| byte_offset(&case.text, s)..byte_offset(&case.text, e))
            .collect();
        let ranges: Vec<_> = tokens.iter().map(|t| t.range.clone()).collect();
        if ranges != expected {
            failures.push(format!(
                "{}: ranges {ranges:?}\n  reference {expected:?}",
                case.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn decode_matches_the_reference() {
    let tok = tokenizer();
    let mut failures = Vec::new();
    for case in cases() {
        let got = tok.decode(&case.ids).unwrap();
        if got != case.decoded {
            failures.push(format!(
                "{}: {got:?}\n  reference {:?}",
                case.name, case.decoded
            ));
        }
        // Samples round-trip.
        if got != case.text {
            failures.push(format!("{}: does not round-trip", case.name));
        }
        for (start, end, expected) in &case.cuts {
            let got = tok.decode(&case.ids[*start..*end]).unwrap();
            if &got != expected {
                failures.push(format!(
                    "{} ids[{start}..{end}]: {got:?}\n  reference {expected:?}",
                    case.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cuts_inside_a_character_decode_to_the_replacement_character() {
    let cases = cases();
    let cut = cases
        .iter()
        .flat_map(|c| c.cuts.iter())
        .find(|(start, _, _)| *start == 0)
        .expect("a cut");
    assert!(cut.2.ends_with('\u{FFFD}'), "{:?}", cut.2);
}

#[test]
fn streamer_pieces_match_the_reference() {
    let tok = tokenizer();
    let mut failures = Vec::new();
    for case in cases() {
        let got = streamer_pieces(&tok, &case.ids).unwrap();
        if got != case.streamer {
            let at = got
                .iter()
                .zip(&case.streamer)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(case.streamer.len()));
            failures.push(format!(
                "{}: piece {at}: {:?}\n  reference {:?}",
                case.name,
                got.get(at),
                case.streamer.get(at)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn stream_deltas_match_the_reference_decode_stream() {
    let tok = tokenizer();
    let mut failures = Vec::new();
    for case in cases() {
        let deltas = tok.stream_deltas(&case.ids).unwrap();
        assert_eq!(deltas.len(), case.ids.len(), "{}", case.name);
        if deltas != case.stream {
            failures.push(format!(
                "{}: {deltas:?}\n  reference {:?}",
                case.name, case.stream
            ));
        }
        // The text ends on a complete character: the deltas are the whole decoded text.
        if deltas.concat() != case.decoded {
            failures.push(format!(
                "{}: the deltas do not concatenate to decode",
                case.name
            ));
        }
        if !case.decoded.contains('\u{FFFD}') && deltas.iter().any(|d| d.contains('\u{FFFD}')) {
            failures.push(format!("{}: a delta holds U+FFFD", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_split_character_is_held_back_until_it_completes() {
    let tok = tokenizer();
    let mut held = 0;
    for case in cases() {
        if case.text.contains('\u{FFFD}') {
            continue;
        }
        let mut stream = StreamDecoder::new(&tok);
        let mut released = String::new();
        for (k, &id) in case.ids.iter().enumerate() {
            released.push_str(&stream.step(id).unwrap());
            let head = tok.decode(&case.ids[..=k]).unwrap();
            assert!(head.starts_with(&released), "{} at id {k}", case.name);
            if head.ends_with('\u{FFFD}') {
                // The ids end inside a multi-byte character: its bytes are held back.
                assert!(!released.contains('\u{FFFD}'), "{} at id {k}", case.name);
                assert!(released.len() < head.len(), "{} at id {k}", case.name);
                held += 1;
            }
        }
        assert_eq!(released, case.decoded, "{}", case.name);
    }
    assert!(held > 20, "only {held} held-back ids");
}

#[test]
fn a_split_emoji_streams_as_one_delta() {
    let tok = tokenizer();
    let ids = tok.encode_ids("ok 😀!").unwrap();
    let deltas = tok.stream_deltas(&ids).unwrap();
    assert_eq!(deltas.concat(), "ok 😀!");
    assert!(deltas.iter().any(|d| d.contains('😀')));
    assert!(deltas.iter().any(|d| d.is_empty()), "{deltas:?}");
    // Ending inside the emoji: its bytes are held back.
    let cut = &ids[..ids.len() - 2];
    assert!(tok.decode(cut).unwrap().ends_with('\u{FFFD}'));
    // (the space shares a token with the emoji's first byte, so it waits too)
    assert_eq!(tok.decode(&ids[..1]).unwrap(), "ok");
    assert_eq!(tok.stream_deltas(cut).unwrap().concat(), "ok");
}

#[test]
fn tokens_and_errors() {
    let tok = tokenizer();
    let think = tok.token_id("<think>").unwrap();
    assert_eq!(tok.token_text(think).as_deref(), Some("<think>"));
    assert!(!tok.is_special(think));
    assert!(tok.is_special(tok.token_id("<|im_end|>").unwrap()));
    assert_eq!(tok.encode_ids("<|im_end|>").unwrap().len(), 1);
    assert!(tok.encode_ids("</function>").unwrap().len() > 1);
    assert_eq!(tok.token_text(u32::MAX), None);
    let err = tok.decode(&[u32::MAX]).unwrap_err();
    assert!(err.contains("outside the vocabulary"), "{err}");
    let err = ModelTokenizer::from_file(Path::new("/nonexistent/tokenizer.json"))
        .err()
        .unwrap();
    assert!(err.contains("/nonexistent/tokenizer.json"), "{err}");
}

/// The reference TextStreamer on synthetic tokenizers with every kind of decoder: those
/// decoded incrementally (byte-level, sentencepiece with byte fallback and stripping,
/// Metaspace, WordPiece, none) and those decoded whole at every id.
#[test]
fn streamer_pieces_match_the_reference_for_every_decoder() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tokenizer/streamer.json");
    let data: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let shapes = data["shapes"].as_array().unwrap();
    assert!(shapes.len() >= 12, "{} decoders", shapes.len());
    let mut failures = Vec::new();
    for shape in shapes {
        let name = shape["name"].as_str().unwrap();
        let tok = ModelTokenizer::from_json_str(shape["tokenizer"].as_str().unwrap()).unwrap();
        for (n, case) in shape["cases"].as_array().unwrap().iter().enumerate() {
            let ids: Vec<u32> = case["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(
                tok.decode(&ids).unwrap(),
                case["decoded"].as_str().unwrap(),
                "{name} case {n}"
            );
            let expected = strings(&case["streamer"]);
            let got = streamer_pieces(&tok, &ids).unwrap();
            if got != expected {
                let at = got
                    .iter()
                    .zip(&expected)
                    .position(|(a, b)| a != b)
                    .unwrap_or(got.len().min(expected.len()));
                failures.push(format!(
                    "{name} case {n}, piece {at}: {:?}\n  reference {:?}",
                    got.get(at),
                    expected.get(at)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
