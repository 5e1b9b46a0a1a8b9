//! Hostile and unusual inputs to the headless commands: a sample header that asks for a billion
//! line breaks, a device or a pipe given as a file, a byte-order mark, a compressed corpus, NaN
//! in a message, samples that are links, and two blesses of one sample at the same time. Each
//! case is generated here at a size that runs in well under a second; the full-size
//! reproductions, with time and peak memory, are in `tools/adversarial/inputs.sh`.
//!
//! Every run is bounded: under `prlimit` (when the system has it) the child may use at most
//! 2 GB of address space and 60 s of CPU, so that a regression fails the test instead of
//! taking the machine down.

use crate::scratch::{Scratch, code, err, out};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The `rtbench` binary with `args`, bounded in memory and CPU time where `prlimit` exists.
fn command(args: &[&str]) -> Command {
    let bin = env!("CARGO_BIN_EXE_rtbench");
    let bounded = Command::new("prlimit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let mut cmd = if bounded {
        let mut c = Command::new("prlimit");
        c.args(["--as=2000000000", "--cpu=60", bin]);
        c
    } else {
        Command::new(bin)
    };
    cmd.args(args);
    cmd
}

fn rtbench(args: &[&str]) -> Output {
    command(args).output().expect("rtbench runs")
}

/// Thinking and a float score, anchored at `<a>`.
const TEMPLATE: &str = r#"{"defaults": {"role": "assistant"}, "start_anchor": "<a>", "fields": {"thinking": {"open": "<think>", "close": "</think>"}, "score": {"open": "<s>", "close": "</s>", "content": "float"}, "content": {}}}"#;

/// The same, but with `reasoning` for `thinking`: another result for the same sample.
const OTHER_TEMPLATE: &str = r#"{"defaults": {"role": "assistant"}, "start_anchor": "<a>", "fields": {"reasoning": {"open": "<think>", "close": "</think>"}, "score": {"open": "<s>", "close": "</s>", "content": "float"}, "content": {}}}"#;

const SAMPLE: &str = "--- prefix ---\n<a>\n--- generation ---\n<think>hm</think>Hello\n";

#[test]
fn a_header_asking_for_a_billion_line_breaks_is_refused_before_any_text_is_made() {
    let s = Scratch::new("newlines");
    let t = s.file("template.json", TEMPLATE);
    let big = s.file(
        "big.sample",
        "--- prefix ---\n<a>\n--- generation (ends with 1000000000 newlines) ---\nx\n",
    );
    let column = "--- generation (".len() + 1;
    let place = format!("big.sample:3:{column}: `ends with 1000000000 newlines`");
    for args in [
        vec!["parse", "--template", &t, &big],
        vec!["explain", "--template", &t, &big, "content"],
        vec!["stream", "--chunks", "1", "--template", &t, &big],
        vec!["chunks", "--template", &t, &big],
    ] {
        let o = rtbench(&args);
        assert_eq!(code(&o), 1, "{args:?}: {}", err(&o));
        assert!(err(&o).contains(&place), "{args:?}: {}", err(&o));
        assert!(
            err(&o).contains("write the text to a .txt file"),
            "{args:?}: {}",
            err(&o)
        );
    }
    let o = rtbench(&["test", "--template", &t, &big]);
    assert_eq!(code(&o), 1);
    assert!(out(&o).contains(&place), "{}", out(&o));
}

/// A pipe (`<(cat /dev/zero)` is one) or a device given as a file is refused before it is
/// read, by every command: reading it whole could never end.
#[cfg(unix)]
#[test]
fn pipes_and_devices_are_refused_everywhere_a_file_is_read() {
    let s = Scratch::new("pipes");
    let t = s.file("template.json", TEMPLATE);
    let fifo = s.path("live.sample");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|st| st.success()), "mkfifo");
    let sample = s.file("x.sample", SAMPLE);
    for (args, words) in [
        (
            vec!["test", "--template", &t, &fifo],
            "is a pipe, not a file",
        ),
        (
            vec!["roundtrip", "--template", &t, &fifo],
            "is a pipe, not a file",
        ),
        (
            vec!["parse", "--template", &t, &fifo],
            "is a pipe, not a file",
        ),
        (
            vec!["parse", "--template", &t, "--prefix-file", &fifo, &sample],
            "is a pipe, not a file",
        ),
        (
            vec!["parse", "--template", &fifo, &sample],
            "is a pipe, not a file",
        ),
        (
            vec!["corpus", "--template", &t, &fifo],
            "is a pipe, not a file",
        ),
        (vec!["test", "--template", &t, "/dev/zero"], "is a device"),
        (
            vec!["roundtrip", "--template", &t, "/dev/zero"],
            "is a device",
        ),
        (vec!["corpus", "--template", &t, "/dev/zero"], "is a device"),
        (vec!["lint", "--template", "/dev/zero"], "is a device"),
    ] {
        let o = rtbench(&args);
        assert_ne!(code(&o), 0, "{args:?}");
        let said = format!("{}{}", out(&o), err(&o));
        assert!(said.contains(words), "{args:?}: {said}");
    }
    // Nothing was written into the pipe's folder, and the pipe is still a pipe.
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind));
}

/// A model folder whose `tokenizer_config.json` is a device: the control tokens are looked up
/// there, and the file is refused instead of read until memory runs out.
#[cfg(unix)]
#[test]
fn a_device_in_a_model_folder_is_refused() {
    let s = Scratch::new("modeldev");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let t = s.file("template.json", TEMPLATE);
    std::fs::copy(
        root.join("samples/tokenizer/tokenizer.json"),
        s.0.join("tokenizer.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/dev/zero", s.0.join("tokenizer_config.json")).unwrap();
    let ids = s.file("ids.json", "[1, 2, 3]");
    let o = rtbench(&["parse", "--template", &t, "--ids", "--prefix", "<a>", &ids]);
    assert_ne!(code(&o), 0, "{}", out(&o));
    assert!(
        err(&o).contains("tokenizer_config.json is a device"),
        "{}",
        err(&o)
    );
}

/// A `.sample` saved with a byte-order mark reads as without it, and blessing keeps the mark.
/// A template with one is refused, as transformers refuses it, with how to remove it.
#[test]
fn a_byte_order_mark_is_layout_in_a_sample_and_refused_in_json() {
    let s = Scratch::new("bom");
    let t = s.file("template.json", TEMPLATE);
    let plain = s.file("plain.sample", SAMPLE);
    let bom = s.file("bom.sample", format!("\u{feff}{SAMPLE}"));
    let a = rtbench(&["parse", "--template", &t, &plain]);
    let b = rtbench(&["parse", "--template", &t, &bom]);
    assert_eq!(code(&b), 0, "{}", err(&b));
    assert_eq!(out(&a), out(&b));
    let o = rtbench(&["test", "--bless", "--template", &t, &bom]);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    let blessed = std::fs::read(&bom).unwrap();
    assert!(blessed.starts_with(b"\xef\xbb\xbf--- prefix ---\n"));
    let o = rtbench(&["test", "--template", &t, &bom]);
    assert!(out(&o).contains("1 passed, 0 failed"), "{}", out(&o));

    let t_bom = s.file("bom-template.json", format!("\u{feff}{TEMPLATE}"));
    let o = rtbench(&["check", "--template", &t_bom]);
    assert_eq!(code(&o), 1);
    assert!(err(&o).contains("Unexpected UTF-8 BOM"), "{}", err(&o));
    assert!(
        err(&o).contains("save it as UTF-8 without BOM"),
        "{}",
        err(&o)
    );
    let tools = s.file("tools.json", "\u{feff}[]");
    let o = rtbench(&["parse", "--template", &t, "--tools", &tools, &plain]);
    assert_eq!(code(&o), 1);
    assert!(err(&o).contains("without BOM"), "{}", err(&o));
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// A compressed corpus is refused from its first bytes with how to decompress it, not read
/// as thousands of malformed records; a byte-order mark at its start is skipped.
#[test]
fn a_compressed_corpus_is_refused_with_how_to_decompress_it() {
    let s = Scratch::new("gz");
    let t = s.file("template.json", TEMPLATE);
    let lines: String = (0..200)
        .map(|i| format!("{{\"prefix\": \"<a>\", \"generation\": \"Hello {i}\"}}\n"))
        .collect();
    let gz = s.file("data.jsonl.gz", gzip(lines.as_bytes()));
    let o = rtbench(&["corpus", "--quiet", "--template", &t, &gz]);
    assert_eq!(code(&o), 2, "{}{}", out(&o), err(&o));
    assert!(err(&o).contains("data.jsonl.gz"), "{}", err(&o));
    assert!(
        err(&o).contains("gzip-compressed, not JSON Lines text"),
        "{}",
        err(&o)
    );
    assert!(err(&o).contains("zcat"), "{}", err(&o));
    assert!(
        !out(&o).contains("records"),
        "no record was read: {}",
        out(&o)
    );
    // On stdin too.
    let mut child = command(&["corpus", "--quiet", "--template", &t, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The refusal may close the pipe before everything is written.
    let _ = stdin.write_all(&gzip(lines.as_bytes()));
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("gzip-compressed"), "{}", err(&o));
    // Binary data that is no known format.
    let bin = s.file("data.jsonl", b"{\"prefix\": \"<a>\"\x00\x01}\n");
    let o = rtbench(&["corpus", "--quiet", "--template", &t, &bin]);
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("NUL bytes"), "{}", err(&o));
    // A byte-order mark is not part of the first record.
    let bom = s.file("bom.jsonl", format!("\u{feff}{lines}"));
    let o = rtbench(&["corpus", "--quiet", "--json", "--template", &t, &bom]);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert!(
        out(&o).contains("\"records\":200,\"parsed\":200,"),
        "{}",
        out(&o)
    );
}

/// A message holding NaN is the same result as itself: the chunking check agrees, bless
/// writes it (as Python's json writes NaN) and the sample then passes, in `test` and `corpus`.
#[test]
fn nan_in_a_message_compares_equal_to_itself() {
    let s = Scratch::new("nan");
    let t = s.file("template.json", TEMPLATE);
    let sample = s.file(
        "nan.sample",
        "--- prefix ---\n<a>\n--- generation ---\n<s>nan</s>Hello\n",
    );
    let o = rtbench(&["chunks", "--template", &t, &sample]);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    let o = rtbench(&["test", "--bless", "--template", &t, &sample]);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert!(
        out(&o).contains("blessed: new expected section"),
        "{}",
        out(&o)
    );
    let text = std::fs::read_to_string(&sample).unwrap();
    assert!(text.contains("\"score\": NaN"), "{text}");
    let o = rtbench(&["test", "--template", &t, &sample]);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert!(out(&o).contains("1 passed, 0 failed"), "{}", out(&o));
    let o = rtbench(&["test", "--bless", "--template", &t, &sample]);
    assert!(out(&o).contains("ok (unchanged)"), "{}", out(&o));
    let corpus = s.file(
        "nan.jsonl",
        "{\"prefix\": \"<a>\", \"generation\": \"<s>nan</s>Hi\", \"expected\": {\"role\": \"assistant\", \"score\": NaN, \"content\": \"Hi\"}}\n",
    );
    let o = rtbench(&["corpus", "--quiet", "--json", "--template", &t, &corpus]);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert!(out(&o).contains("\"checked\":1,"), "{}", out(&o));
    assert!(out(&o).contains("\"differs\":0,"), "{}", out(&o));
}

/// Blessing a sample that is a symbolic link writes the file it points to (the link stays a
/// link); a sample with other hard links is written with a warning that they keep the old
/// text.
#[cfg(unix)]
#[test]
fn bless_writes_through_links_and_warns_about_hard_links() {
    let s = Scratch::new("links");
    let t = s.file("template.json", TEMPLATE);
    let real = s.file("real/x.sample", SAMPLE);
    let link = s.path("x.sample");
    std::os::unix::fs::symlink("real/x.sample", &link).unwrap();
    let o = rtbench(&["test", "--bless", "--template", &t, &link]);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("--- expected ---")
    );
    assert!(
        out(&o).contains("x.sample is a link: wrote "),
        "{}",
        out(&o)
    );
    let o = rtbench(&["test", "--template", &t, &link]);
    assert!(out(&o).contains("1 passed, 0 failed"), "{}", out(&o));

    let one = s.file("one.sample", SAMPLE);
    let twin = s.path("twin.sample");
    std::fs::hard_link(&one, &twin).unwrap();
    let o = rtbench(&["test", "--bless", "--template", &t, &one]);
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert!(
        out(&o).contains(
            "has 1 other hard link; the write replaces the file, so that name keeps the old text"
        ),
        "{}",
        out(&o)
    );
    assert_eq!(std::fs::read_to_string(&twin).unwrap(), SAMPLE);
    // --dry-run says so too, and writes nothing.
    std::fs::write(&one, SAMPLE).unwrap();
    std::fs::remove_file(&twin).unwrap();
    std::fs::hard_link(&one, &twin).unwrap();
    let o = rtbench(&["test", "--bless", "--dry-run", "--template", &t, &one]);
    assert!(out(&o).contains("other hard link"), "{}", out(&o));
    assert_eq!(std::fs::read_to_string(&one).unwrap(), SAMPLE);
}

/// Two `test --bless` runs of one sample with different templates, started together: never
/// both write from the original (one write would be lost). Either one is refused because the
/// file changed, or the second read the first's write; the file always holds one complete
/// result.
#[test]
fn concurrent_blesses_of_one_sample_never_lose_a_write() {
    let s = Scratch::new("race");
    let a = s.file("a/template.json", TEMPLATE);
    let b = s.file("b/template.json", OTHER_TEMPLATE);
    let sample = s.path("x.sample");
    for round in 0..6 {
        std::fs::write(&sample, SAMPLE).unwrap();
        let children: Vec<_> = [&a, &b]
            .iter()
            .map(|t| {
                command(&["test", "--bless", "--template", t, &sample])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outputs: Vec<Output> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let from_original = outputs
            .iter()
            .filter(|o| out(o).contains("blessed: new expected section"))
            .count();
        assert!(
            from_original <= 1,
            "round {round}: both wrote from the original: {:?}",
            outputs.iter().map(out).collect::<Vec<_>>()
        );
        for o in &outputs {
            if code(o) != 0 {
                assert!(
                    err(o).contains("changed on disk since it was read"),
                    "round {round}: {}",
                    err(o)
                );
            }
        }
        let text = std::fs::read_to_string(&sample).unwrap();
        assert!(text.starts_with(SAMPLE), "{text}");
        assert_eq!(text.matches("--- expected ---").count(), 1, "{text}");
        assert!(
            text.contains("\"thinking\": \"hm\"") != text.contains("\"reasoning\": \"hm\""),
            "one complete result: {text}"
        );
    }
}

/// `lint` on a template that repeats one key many times: one warning for the key, at the
/// occurrence the reference keeps.
#[test]
fn lint_says_a_key_repeated_many_times_once() {
    let s = Scratch::new("lint");
    let n = 5_000;
    let entries = vec!["\"role\": \"assistant\""; n].join(", ");
    let t = s.file(
        "template.json",
        format!(
            "{{\"defaults\": {{{entries}}}, \"start_anchor\": \"<a>\", \"fields\": {{\"content\": {{\"close\": \"<e>\"}}}}}}"
        ),
    );
    let o = rtbench(&["lint", "--template", &t]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let said = out(&o);
    assert_eq!(said.matches("warning:").count(), 1, "{said}");
    assert!(
        said.contains(&format!("'role' is written {n} times")),
        "{said}"
    );
    assert!(said.contains(": 1 warning"), "{said}");
}
