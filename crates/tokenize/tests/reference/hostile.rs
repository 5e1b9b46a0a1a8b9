//! Hostile `tokenizer.json` files, generated here from the sample tokenizer: nesting that
//! crashed the tokenizers library's reader, a decoder that panics, normalizers, pre-tokenizers
//! and decoders that grow text thousands of times, truncation and padding settings. Each must
//! give a clear error naming the file (or the reference's result), within bounded memory
//! (measured with a per-thread counting allocator). And the TextStreamer's work, counted in
//! decoded ids, must grow linearly with the text.
//!
//! Full-size reproductions: `tools/adversarial/tokenizer.sh`.

use std::path::{Path, PathBuf};

use rtbench_tokenize::{ModelTokenizer, streamer_pieces};
use serde_json::{Value, json};

use alloc_count::peak_of;

#[global_allocator]
static ALLOCATOR: alloc_count::Counting = alloc_count::Counting;

fn sample() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/tokenizer/tokenizer.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A generated tokenizer file, removed with its folder when dropped.
struct Variant(PathBuf);

impl std::ops::Deref for Variant {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Variant {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The sample tokenizer with `key` set to `value` (a JSON text), written to a file of its own.
fn variant(name: &str, key: &str, value: &str) -> Variant {
    let mut t = sample();
    t[key] = json!("@@VALUE@@");
    let text = serde_json::to_string(&t)
        .unwrap()
        .replace("\"@@VALUE@@\"", value);
    let dir = std::env::temp_dir().join(format!(
        "rtbench-hostile-tokenizer-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tokenizer.json");
    std::fs::write(&path, text).unwrap();
    Variant(path)
}

/// The sample's (byte-level) decoder, as JSON.
fn byte_level() -> String {
    sample()["decoder"].to_string()
}

/// `depth` `Sequence` decoders, each holding the next, around the sample's byte-level one.
fn nested_decoder(depth: usize) -> String {
    format!(
        "{}{}{}",
        "{\"type\": \"Sequence\", \"decoders\": [".repeat(depth),
        byte_level(),
        "]}".repeat(depth)
    )
}

fn replace(pattern: &str, content: &str) -> String {
    json!({"type": "Replace", "pattern": {"String": pattern}, "content": content}).to_string()
}

#[test]
fn nested_sequences_are_refused_before_the_library_reads_them() {
    // 100 levels made the library unwrap serde_json's recursion error (a panic), 130 overflowed
    // a thread's stack; the reference reads at most 62 (past them it raises "recursion limit
    // exceeded").
    for depth in [63, 100, 130, 5000] {
        let path = variant(
            &format!("nested-{depth}"),
            "decoder",
            &nested_decoder(depth),
        );
        let err = ModelTokenizer::from_file(&path).err().unwrap();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("nests more than 127 levels"), "{err}");
        assert!(err.contains("flatten"), "{err}");
    }
    // The deepest nesting the reference reads is read (on a thread with a small stack), and
    // decodes as the decoder it wraps.
    let path = variant("nested-62", "decoder", &nested_decoder(62));
    let plain = ModelTokenizer::from_json_str(&sample().to_string()).unwrap();
    let ids = plain.encode_ids("Zürich 北京 😀 ok").unwrap();
    let nested = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || ModelTokenizer::from_file(&path).unwrap())
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(nested.decode(&ids).unwrap(), plain.decode(&ids).unwrap());
    assert_eq!(
        streamer_pieces(&nested, &ids).unwrap(),
        streamer_pieces(&plain, &ids).unwrap()
    );
}

#[test]
fn a_panic_in_the_library_is_an_error_naming_the_file() {
    // `Strip` with a `stop` longer than a token made only of its content counts below zero
    // inside the library.
    let strip = json!({"type": "Strip", "content": "a", "start": 0, "stop": 5}).to_string();
    let path = variant("strip-panics", "decoder", &strip);
    let tok = ModelTokenizer::from_file(&path).unwrap();
    let ids = tok.encode_ids("a").unwrap();
    let err = tok.decode(&ids).unwrap_err();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("the tokenizers library failed"), "{err}");
    assert!(err.contains("check the file"), "{err}");
    let err = streamer_pieces(&tok, &ids).unwrap_err();
    assert!(err.contains("the tokenizers library failed"), "{err}");
}

#[test]
fn a_normalizer_that_grows_text_is_stopped_within_the_budget() {
    // One `a` becomes 10,000: 5 KB of `a` became 50 MB of text (4.2 GB in all, then an abort).
    let path = variant(
        "normalizer",
        "normalizer",
        &replace("a", &"a".repeat(10_000)),
    );
    let tok = ModelTokenizer::from_file(&path).unwrap();
    let text = "a".repeat(5_000);
    let (result, peak) = peak_of(|| tok.encode(&text));
    let err = result.unwrap_err();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains("its normalizer makes text grow too much"),
        "{err}"
    );
    assert!(err.contains("fix the normalizer"), "{err}");
    assert!(peak < 4 << 20, "encoding held {peak} bytes");
    let (result, peak) = peak_of(|| tok.encode_plain(&text));
    assert!(
        result
            .unwrap_err()
            .contains("its normalizer makes text grow too much")
    );
    assert!(peak < 4 << 20, "encoding held {peak} bytes");
    // Text the normalizer leaves alone encodes as without it (only the matches are counted).
    let plain = ModelTokenizer::from_json_str(&sample().to_string()).unwrap();
    let text = "xyz ".repeat(1_000);
    assert_eq!(tok.encode(&text).unwrap(), plain.encode(&text).unwrap());
    assert_eq!(
        tok.encode_plain(&text).unwrap(),
        plain.encode_plain(&text).unwrap()
    );
}

#[test]
fn a_pre_tokenizer_chain_is_measured_stage_by_stage() {
    // Each byte-level stage can double the text (bytes past ASCII become two-byte
    // characters): 30 of them bound the growth at 2^30 though ASCII text never grows.
    let stage = json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true,
                       "use_regex": false});
    let chain = json!({"type": "Sequence", "pretokenizers": vec![stage; 30]}).to_string();
    let path = variant("pre-tokenizer", "pre_tokenizer", &chain);
    let tok = ModelTokenizer::from_file(&path).unwrap();
    // ASCII without spaces stays as it is, stage after stage; a space becomes `Ġ`, which each
    // stage doubles.
    assert!(tok.encode("plainasciitext").is_ok());
    let (result, peak) = peak_of(|| tok.encode(&"é".repeat(2_000)));
    let err = result.unwrap_err();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains("its pre-tokenizer makes text grow too much"),
        "{err}"
    );
    assert!(peak < 4 << 20, "encoding held {peak} bytes");
}

#[test]
fn a_decoder_that_grows_text_is_stopped_within_the_budget() {
    let grow = format!(
        "{{\"type\": \"Sequence\", \"decoders\": [{}, {}]}}",
        byte_level(),
        replace("a", &"a".repeat(10_000))
    );
    let path = variant("decoder", "decoder", &grow);
    let tok = ModelTokenizer::from_file(&path).unwrap();
    let plain = ModelTokenizer::from_json_str(&sample().to_string()).unwrap();
    let ids = plain.encode_ids(&"a".repeat(5_000)).unwrap();
    let (result, peak) = peak_of(|| tok.decode(&ids));
    let err = result.unwrap_err();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains("its decoder makes text grow too much"),
        "{err}"
    );
    assert!(err.contains("fix the decoder"), "{err}");
    assert!(peak < 4 << 20, "decoding held {peak} bytes");
    let (result, peak) = peak_of(|| streamer_pieces(&tok, &ids));
    assert!(
        result
            .unwrap_err()
            .contains("its decoder makes text grow too much")
    );
    assert!(peak < 4 << 20, "streaming held {peak} bytes");
    // Ids whose text has no `a` decode as without the replacement.
    let ids = plain.encode_ids(&"xyz ".repeat(1_000)).unwrap();
    assert_eq!(tok.decode(&ids).unwrap(), plain.decode(&ids).unwrap());
}

#[test]
fn the_file_s_truncation_and_padding_are_not_applied() {
    // The reference (`PreTrainedTokenizerFast`) turns both off; padding to a million tokens
    // would hold a million tokens.
    let mut t = sample();
    t["truncation"] = json!({"direction": "Right", "max_length": 1, "strategy": "LongestFirst",
                             "stride": 0});
    t["padding"] = json!({"strategy": {"Fixed": 1_000_000}, "direction": "Right",
                          "pad_to_multiple_of": null, "pad_id": 0, "pad_type_id": 0,
                          "pad_token": "!"});
    let tok = ModelTokenizer::from_json_str(&t.to_string()).unwrap();
    let plain = ModelTokenizer::from_json_str(&sample().to_string()).unwrap();
    let (ids, peak) = peak_of(|| tok.encode_ids("hello world, twice").unwrap());
    assert_eq!(ids, plain.encode_ids("hello world, twice").unwrap());
    assert!(peak < 1 << 20, "encoding held {peak} bytes");
}

/// Text without spaces or newlines: the reference's cache never restarts, and it decodes all
/// of it at every id.
fn unbroken(len: usize) -> String {
    let unit = "x=1;y=(2*z)/3;北京;é;😀;";
    unit.repeat(len / unit.len() + 1)
}

/// The ids decoded while streaming `ids` (checking the pieces make up the whole text), and
/// the number of ids.
fn streaming_work(tok: &ModelTokenizer, ids: &[u32]) -> (u64, u64) {
    let before = tok.decoded_ids();
    let pieces = streamer_pieces(tok, ids).unwrap();
    let work = tok.decoded_ids() - before;
    assert_eq!(pieces.concat(), tok.decode(ids).unwrap());
    (ids.len() as u64, work)
}

/// Checks that streaming `small` then `large` ids decodes a few ids per id, in proportion.
/// Decoding the whole cache at every id, as the reference does, decodes about n^2/2.
fn assert_linear((small_ids, small): (u64, u64), (large_ids, large): (u64, u64)) {
    assert!(
        small <= 8 * small_ids,
        "{small} ids decoded for {small_ids}"
    );
    assert!(
        large <= 8 * large_ids,
        "{large} ids decoded for {large_ids}"
    );
    assert!(
        large * small_ids <= 5 * small * large_ids / 4,
        "{small} ids decoded for {small_ids}, then {large} for {large_ids}"
    );
}

#[test]
fn the_streamer_decodes_a_number_of_ids_linear_in_the_text() {
    // A byte-level tokenizer (the bundled sample's).
    let tok = ModelTokenizer::from_json_str(&sample().to_string()).unwrap();
    let ids = |len: usize| tok.encode_ids(&unbroken(len)).unwrap();
    assert_linear(
        streaming_work(&tok, &ids(2_000)),
        streaming_work(&tok, &ids(8_000)),
    );
    // A sentencepiece one (`▁` words, byte fallback, the leading space stripped), from the
    // reference cases: words, punctuation, CJK and a byte-fallback character, no newline.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tokenizer/streamer.json");
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let llama = data["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "llama")
        .unwrap();
    let tok = ModelTokenizer::from_json_str(llama["tokenizer"].as_str().unwrap()).unwrap();
    let unit: Vec<u32> = [
        "▁the", "a", "...", "中", "<0xC3>", "<0xA9>", "▁a", "42", ",",
    ]
    .iter()
    .map(|t| tok.token_id(t).unwrap())
    .collect();
    let ids = |n: usize| unit.iter().copied().cycle().take(n).collect::<Vec<u32>>();
    assert_linear(
        streaming_work(&tok, &ids(1_000)),
        streaming_work(&tok, &ids(4_000)),
    );
}

#[test]
fn a_model_that_writes_a_long_text_per_token_is_stopped_within_the_budget() {
    // The unknown token's text (and a model's prefix and suffix) is copied into every token
    // that uses it: a megabyte-long `unk_token` made each piece of input a megabyte.
    let mut t = sample();
    t["model"]["unk_token"] = json!("u".repeat(1 << 20));
    let dir = std::env::temp_dir().join(format!(
        "rtbench-hostile-tokenizer-{}-model",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = Variant(dir.join("tokenizer.json"));
    std::fs::write(&*path, t.to_string()).unwrap();
    let tok = ModelTokenizer::from_file(&path).unwrap();
    let text = "hello world ".repeat(400);
    let (result, peak) = peak_of(|| tok.encode(&text));
    let err = result.unwrap_err();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("its model makes text grow too much"), "{err}");
    assert!(err.contains("unk_token"), "{err}");
    assert!(peak < 4 << 20, "encoding held {peak} bytes");
    // The sample's own model (no unknown token, byte-level pieces) encodes as before.
    let plain = ModelTokenizer::from_json_str(&sample().to_string()).unwrap();
    assert!(plain.encode(&text).is_ok());
}
