//! The reference's command line on values nested around each recursion limit, replayed on the
//! `rtbench` binary (the engine's own semantics replay is `crates/engine/tests/engine/semantics.rs`).

use std::path::Path;

use rtbench_engine::py::json_loads;
use rtbench_engine::value::Value;

fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_dict().and_then(|d| d.get(key))
}

fn text(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
}

/// The reference's command line run on values nested around each recursion limit
/// (`tools/semantics/measure_recursion.py`: deep-copied `defaults`, applied transforms, tool-call
/// lists, in `parse` and `stream`, regions closed in the prefix, a feed or at the end): rtbench
/// prints the same lines and fails with the same error at the same point. Both versions give
/// the same runs; the command line runs the newest.
#[test]
fn recursion_limits_match_the_reference_command_line() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/semantics/recursion/runs.json");
    let doc = json_loads(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let runs = get(&doc, "runs").and_then(Value::as_list).unwrap();
    let dir = std::env::temp_dir().join(format!("rtbench-recursion-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    for run in runs {
        let field = |k: &str| text(get(run, k)).unwrap_or("").to_string();
        let (kind, command) = (field("kind"), field("command"));
        // `check` loads one frame shallower than `parse` and `stream`, which rtbench's template
        // loading does not tell apart: its defaults may nest one level deeper there.
        if command == "check" && kind.starts_with("defaults") {
            continue;
        }
        compared += 1;
        let file = |name: &str, body: &str| {
            let p = dir.join(name);
            std::fs::write(&p, body).unwrap();
            p.to_string_lossy().into_owned()
        };
        let mut args = vec![
            command.clone(),
            "--template".into(),
            file("t.json", &field("template")),
        ];
        if command != "check" {
            args.push("--prefix-file".into());
            args.push(file("p.txt", &field("prefix")));
            if let Some(tools) = text(get(run, "tools")) {
                args.push("--tools".into());
                args.push(file("tools.json", tools));
            }
            if command == "stream" {
                args.push("--chunks".into());
                args.push("1000000".into());
            }
            args.push(file("o.txt", &field("output")));
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rtbench"))
            .args(&args)
            .env_remove("RTBENCH_REFERENCE")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let want_code = match get(run, "code") {
            Some(Value::Int(c)) => *c,
            _ => -1,
        };
        let name = format!(
            "{kind} {command} depth {}",
            get(run, "depth").map(Value::py_repr).unwrap_or_default()
        );
        let code = i64::from(out.status.code().unwrap_or(-1));
        if (want_code == 0) != (code == 0) {
            failures.push(format!(
                "{name}: exit {code}, the reference {want_code}: {stderr}"
            ));
            continue;
        }
        if command == "check" {
            continue;
        }
        if stdout != field("stdout") {
            failures.push(format!("{name}: stdout differs"));
        }
        if want_code != 0 {
            // `error: RecursionError: ...` as the first line, a located note after it.
            let want = field("error");
            let got = stderr
                .lines()
                .find(|l| l.starts_with("error: "))
                .unwrap_or("");
            if got != want {
                failures.push(format!("{name}: expected {want:?}, got {got:?}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "recursion: {compared} runs, {} equal",
        compared - failures.len()
    );
    for f in failures.iter().take(20) {
        eprintln!("  FAIL {f}");
    }
    assert!(compared > 50, "only {compared} runs");
    assert!(failures.is_empty(), "{} runs differ", failures.len());
}
