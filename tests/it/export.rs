//! Export round trips: the template lands under `response_template` in the file's own style,
//! the file reloads as the same template, and every other byte is unchanged.

use std::process::Command;

use rtbench_engine::py::json_loads;
use rtbench_engine::template::source::{load_file, source_from_text};
use rtbench_engine::value::Value;
use rtbench_tooling::export::{detect_style, export};

const CONFIG: &str = include_str!("../data/export/tokenizer_config.json");
const SMOLLM3: &str = include_str!("../../samples/smollm3/template.json");

fn template(text: &str) -> Value {
    json_loads(text).unwrap()
}

/// Asserts that `new` is `old` with one contiguous stretch replaced, and returns the old and
/// new stretches.
fn single_change<'a>(old: &'a str, new: &'a str) -> (&'a str, &'a str) {
    let head = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let tail = old[head..]
        .bytes()
        .rev()
        .zip(new[head..].bytes().rev())
        .take_while(|(a, b)| a == b)
        .count();
    (&old[head..old.len() - tail], &new[head..new.len() - tail])
}

/// The exported file loads as a template equal to the one exported.
fn reloads_as(text: &str, expected: &Value) {
    let source = source_from_text("tokenizer_config.json".into(), text.into()).unwrap();
    assert!(source.is_tokenizer_config());
    assert_eq!(source.template_value(), expected);
    rtbench_engine::template::load_template(source.template_value()).expect("valid");
}

#[test]
fn adds_the_key_in_sorted_place_in_save_pretrained_style() {
    let t = template(SMOLLM3);
    let plan = export(CONFIG, &t).unwrap();
    assert!(!plan.replaced);
    reloads_as(&plan.new_text, &t);
    let new = &plan.new_text;
    let at = new.find("\"response_template\"").unwrap();
    let added = &new[at..at + new.len() - CONFIG.len()];
    assert_eq!(
        format!("{}{added}{}", &CONFIG[..at], &CONFIG[at..]),
        *new,
        "only inserted"
    );
    // Two-space indent, `": "`, in sorted place between pad_token and split_special_tokens.
    assert!(added.starts_with("\"response_template\": {\n    \"version\": 1,\n    \"defaults\": {\n      \"role\": \"assistant\"\n    },"), "{added}");
    assert!(added.ends_with("\n  },\n  "), "{added:?}");
    assert!(plan.new_text[..at].ends_with("\"pad_token\": \"<|endoftext|>\",\n  "));
    // The template's own key order is kept (it decides output order and tie-breaks).
    let fields =
        plan.new_text.find("\"thinking\"").unwrap() < plan.new_text.find("\"tool_calls\"").unwrap();
    assert!(fields);
}

#[test]
fn replaces_an_existing_template_and_nothing_else() {
    let first = export(CONFIG, &template(SMOLLM3)).unwrap().new_text;
    let edited = template(&SMOLLM3.replace("\"</think>\"", "\"</thinking>\""));
    let plan = export(&first, &edited).unwrap();
    assert!(plan.replaced);
    reloads_as(&plan.new_text, &edited);
    assert_eq!(single_change(&first, &plan.new_text), ("", "ing"));
    // Exporting the same template again changes nothing.
    assert!(export(&plan.new_text, &edited).unwrap().is_unchanged());
}

#[test]
fn follows_other_file_styles() {
    let t = template(SMOLLM3);
    // Four spaces, unsorted keys (appended last), CRLF line endings.
    let crlf = "{\r\n    \"tokenizer_class\": \"X\",\r\n    \"eos_token\": \"</s>\"\r\n}\r\n";
    let plan = export(crlf, &t).unwrap();
    reloads_as(&plan.new_text, &t);
    let (_, added) = single_change(crlf, &plan.new_text);
    assert!(
        added.starts_with(",\r\n    \"response_template\": {\r\n        \"version\": 1,"),
        "{added:?}"
    );
    assert!(!plan.new_text.replace("\r\n", "").contains('\n'));
    // Tabs.
    let tabs = "{\n\t\"eos_token\": \"</s>\"\n}";
    let plan = export(tabs, &t).unwrap();
    assert!(
        plan.new_text
            .contains("\n\t\"response_template\": {\n\t\t\"version\": 1,"),
        "{}",
        plan.new_text
    );
    // One line, compact separators.
    let compact = r#"{"eos_token":"</s>","tokenizer_class":"X"}"#;
    let plan = export(compact, &t).unwrap();
    reloads_as(&plan.new_text, &t);
    assert!(
        plan.new_text
            .contains(r#","response_template":{"version":1,"defaults":{"role":"assistant"}"#),
        "{}",
        plan.new_text
    );
    // A file written with ensure_ascii keeps non-ASCII escaped.
    let ascii = "{\n  \"eos_token\": \"<\\uff5cend\\u2581of\\u2581sentence\\uff5c>\"\n}\n";
    assert!(detect_style(ascii).ensure_ascii);
    let r1 = template(
        r#"{"start_anchor": "<｜Assistant｜>", "fields": {"content": {"close": "<｜end▁of▁sentence｜>"}}}"#,
    );
    let plan = export(ascii, &r1).unwrap();
    reloads_as(&plan.new_text, &r1);
    assert!(plan.new_text.is_ascii());
    assert!(
        plan.new_text
            .contains("\"start_anchor\": \"<\\uff5cAssistant\\uff5c>\"")
    );
    // An empty object.
    let plan = export("{}\n", &t).unwrap();
    reloads_as(&plan.new_text, &t);
}

#[test]
fn refuses_files_that_are_not_json_objects() {
    let t = template(SMOLLM3);
    assert!(
        export("{\"a\": 1,}", &t)
            .unwrap_err()
            .contains("not valid JSON")
    );
    assert!(export("[1, 2]", &t).unwrap_err().contains("not an object"));
}

#[test]
fn headless_export_shows_the_change_and_writes_only_when_asked() {
    let dir = std::env::temp_dir().join(format!("rtbench-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("tokenizer_config.json");
    std::fs::write(&config, CONFIG).unwrap();
    let tpl = dir.join("template.json");
    std::fs::write(&tpl, SMOLLM3).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "export",
            "--template",
            tpl.to_str().unwrap(),
            config.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_rtbench"))
            .args(&args)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("+  \"response_template\": {") && out.contains("run again with --write"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        CONFIG,
        "not written without --write"
    );
    let o = run(&["--write"]);
    assert_eq!(o.status.code(), Some(0));
    let written = std::fs::read_to_string(&config).unwrap();
    assert_eq!(
        written,
        export(CONFIG, &template(SMOLLM3)).unwrap().new_text
    );
    let (tpl_loaded, _) = load_file(&config).unwrap();
    let (expected, _) = load_file(&tpl).unwrap();
    assert_eq!(tpl_loaded.fields().len(), expected.fields().len());
    assert!(String::from_utf8_lossy(&run(&[]).stdout).contains("already up to date"));
    // A broken config is refused and left alone.
    std::fs::write(&config, "{\"eos_token\": ").unwrap();
    let o = run(&["--write"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "{\"eos_token\": "
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compact_files_keep_their_separators_and_odd_files_are_handled() {
    let t = template(SMOLLM3);
    // Sorted compact file: the new entry uses `,` like its neighbours.
    let plan = export(r#"{"a":1,"z":2}"#, &t).unwrap();
    reloads_as(&plan.new_text, &t);
    assert!(
        plan.new_text
            .starts_with(r#"{"a":1,"response_template":{"version":1,"#),
        "{}",
        plan.new_text
    );
    assert!(
        plan.new_text.ends_with(r#""content":"text"}}},"z":2}"#),
        "{}",
        plan.new_text
    );
    // A space before the colon is the file's style too.
    let plan = export("{\n  \"a\" : 1\n}", &t).unwrap();
    assert!(
        plan.new_text
            .contains("\"response_template\" : {\n    \"version\" : 1,"),
        "{}",
        plan.new_text
    );
    // An escaped backslash before `u00e9` is not an escape of a non-ASCII character.
    assert!(!detect_style(r#"{"p": "C:\\u00e9x"}"#).ensure_ascii);
    // NaN in the file (Python's json accepts it) is kept and does not confuse the check.
    let plan = export("{\"a\": NaN}", &t).unwrap();
    assert!(
        plan.new_text
            .starts_with("{\"a\": NaN, \"response_template\": {"),
        "{}",
        plan.new_text
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_config_is_written_through_the_link() {
    let dir = std::env::temp_dir().join(format!("rtbench-export-link-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("blobs")).unwrap();
    std::fs::create_dir_all(dir.join("snapshot")).unwrap();
    let blob = dir.join("blobs/abc123");
    std::fs::write(&blob, CONFIG).unwrap();
    let link = dir.join("snapshot/tokenizer_config.json");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("../blobs/abc123", &link).unwrap();
    let tpl = dir.join("template.json");
    std::fs::write(&tpl, SMOLLM3).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args([
            "export",
            "--template",
            tpl.to_str().unwrap(),
            link.to_str().unwrap(),
            "--write",
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(&blob).unwrap(),
        export(CONFIG, &template(SMOLLM3)).unwrap().new_text
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("is a link: wrote"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `rtbench export --template T CONFIG EXTRA...`.
fn export_cli(
    tpl: &std::path::Path,
    config: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(["export", "--template"])
        .arg(tpl)
        .arg(config)
        .args(extra)
        .output()
        .unwrap()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rtbench-export-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("template.json"), SMOLLM3).unwrap();
    dir
}

#[cfg(unix)]
#[test]
fn a_read_only_config_is_refused_unless_forced_and_keeps_mode_and_owner() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = scratch("ro");
    let tpl = dir.join("template.json");
    let config = dir.join("tokenizer_config.json");
    std::fs::write(&config, CONFIG).unwrap();
    // As the superuser (the project's containers), the config belongs to someone else.
    let given = std::os::unix::fs::chown(&config, Some(65534), Some(65534)).is_ok();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o444)).unwrap();
    let owner = |p: &std::path::Path| {
        let m = std::fs::metadata(p).unwrap();
        (m.uid(), m.gid(), m.permissions().mode() & 0o777)
    };
    let before = owner(&config);

    let o = export_cli(&tpl, &config, &["--write"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("is read-only; nothing was written") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), CONFIG);

    let o = export_cli(&tpl, &config, &["--write", "--force"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        export(CONFIG, &template(SMOLLM3)).unwrap().new_text
    );
    assert_eq!(owner(&config), before);
    if given {
        assert_eq!(before, (65534, 65534, 0o444));
    }
    // --force means nothing without --write.
    assert_eq!(
        export_cli(&tpl, &config, &["--force"]).status.code(),
        Some(2)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_blob_shared_by_snapshots_or_hard_links_is_named_before_writing() {
    let dir = scratch("shared");
    let tpl = dir.join("template.json");
    let cache = dir.join("models--org--tiny");
    std::fs::create_dir_all(cache.join("blobs")).unwrap();
    std::fs::write(cache.join("blobs/5eed"), CONFIG).unwrap();
    for rev in ["main1", "main2"] {
        let d = cache.join("snapshots").join(rev);
        std::fs::create_dir_all(&d).unwrap();
        std::os::unix::fs::symlink("../../blobs/5eed", d.join("tokenizer_config.json")).unwrap();
    }
    let link = cache.join("snapshots/main1/tokenizer_config.json");
    let o = export_cli(&tpl, &link, &[]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("is a cache blob that 1 other snapshot links to; writing it changes them too")
            && out.contains("snapshots/main2/tokenizer_config.json")
            && out.contains("cp --remove-destination"),
        "{out}"
    );

    let plain = dir.join("tokenizer_config.json");
    std::fs::write(&plain, CONFIG).unwrap();
    std::fs::hard_link(&plain, dir.join("backup.json")).unwrap();
    let o = export_cli(&tpl, &plain, &["--write"]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "has 1 other hard link; the write replaces the file, so that name keeps the old text"
        ),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("backup.json")).unwrap(),
        CONFIG
    );
    let _ = std::fs::remove_dir_all(&dir);
}
