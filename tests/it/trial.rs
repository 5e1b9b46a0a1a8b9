//! The workbench as a new template author meets it: the sample selected is the sample shown
//! (also while the template is invalid), `b` blesses the sample selected when it was pressed
//! and refuses a stale result, `B` blesses every changed sample after listing them, a failed
//! transform points at its placeholder in the template with advice from the parsed value, and
//! the details of an 80x24 screen (multi-line errors, the list's status words and marks).
//! Screens are rendered into ratatui's `TestBackend`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rtbench::testing::update::{self, Cmd};
use rtbench::testing::view::diagnostics::items;
use rtbench::testing::{Action, Inputs, Msg, State, Theme, request_for, view, worker};

const TEMPLATE: &str = include_str!("../../samples/smollm3/template.json");
const WEATHER: &str = include_str!("../../samples/smollm3/weather-tool-call.sample");
const TRUNCATED: &str = include_str!("../../samples/smollm3/truncated-tool-call.sample");

/// The SmolLM3 template with a misspelt key: it does not load.
fn broken() -> &'static str {
    Box::leak(
        TEMPLATE
            .replacen("\"close\"", "\"clsoe\"", 1)
            .into_boxed_str(),
    )
}

fn embedded(template: &'static str, samples: &[(&str, &'static str)]) -> Inputs {
    Inputs::embedded("demo", template, samples)
}

fn two_samples(template: &'static str) -> Inputs {
    embedded(
        template,
        &[
            ("truncated-tool-call.sample", TRUNCATED),
            ("weather-tool-call.sample", WEATHER),
        ],
    )
}

/// A state after the parse lane's answer for `inputs`, sample `sample` selected.
fn loaded(inputs: &Inputs, size: (u16, u16), sample: usize) -> State {
    let mut state = State::new(Theme::dark(), size);
    state.ui.selected_sample = sample;
    answer(&mut state, inputs);
    state
}

/// The parse lane answers the state's request for `inputs`; returns what the update says.
fn answer(state: &mut State, inputs: &Inputs) -> Cmd {
    let req = request_for(state);
    update::update(state, Msg::Report(Box::new(worker::compute(inputs, &req))))
}

fn screen(state: &State) -> String {
    let (w, h) = state.ui.size;
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view::draw(f, state)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..h {
        let mut x = 0;
        while x < w {
            let symbol = buf[(x, y)].symbol();
            out.push_str(symbol);
            x += ratatui::text::Span::raw(symbol).width().max(1) as u16;
        }
        out.push('\n');
    }
    out
}

fn shown_sample(state: &State) -> String {
    state
        .analysis()
        .expect("a result on screen")
        .sample_name
        .clone()
}

#[test]
fn the_sample_selected_is_the_sample_shown_while_the_template_is_invalid() {
    for size in [(80, 24), (120, 40)] {
        let mut state = loaded(&two_samples(TEMPLATE), size, 0);
        assert_eq!(shown_sample(&state), "demo/truncated-tool-call.sample");
        // The template breaks: the result stays, stale.
        let bad = two_samples(broken());
        answer(&mut state, &bad);
        assert!(state.is_stale());
        // Selecting the next sample shows it (parsed with the last template that loaded).
        assert_eq!(
            update::on_action(&mut state, Action::NextSample),
            Cmd::Reparse
        );
        answer(&mut state, &bad);
        assert_eq!(shown_sample(&state), "demo/weather-tool-call.sample");
        assert!(state.is_stale());
        let a = state.analysis().unwrap();
        assert!(
            a.document.contains("get_weather"),
            "the weather sample's text"
        );
        let text = screen(&state);
        assert!(text.contains("1 raw weather-tool-call.sample"), "{text}");
        assert!(text.contains("STALE"), "{text}");
        // b acts on what is shown, and refuses it while it is stale.
        assert_eq!(update::on_action(&mut state, Action::Bless), Cmd::None);
        let note = state.ui.note.clone().unwrap_or_default();
        assert!(
            note.starts_with("cannot bless: the template is invalid (demo/template.json:")
                && note.contains("STALE"),
            "{note}"
        );
        assert_eq!(update::on_action(&mut state, Action::BlessAll), Cmd::None);
        assert!(state.modes.overlay.is_none());
        assert!(
            state
                .ui
                .note
                .as_deref()
                .unwrap_or("")
                .starts_with("cannot bless")
        );
    }
}

#[test]
fn bless_acts_on_the_sample_selected_when_the_key_was_pressed() {
    let inputs = two_samples(TEMPLATE);
    let mut state = loaded(&inputs, (80, 24), 0);
    // j then b before the next sample's result arrives: the bless waits for that sample.
    assert_eq!(
        update::on_action(&mut state, Action::NextSample),
        Cmd::Reparse
    );
    assert_eq!(shown_sample(&state), "demo/truncated-tool-call.sample");
    assert_eq!(update::on_action(&mut state, Action::Bless), Cmd::None);
    assert_eq!(
        state.ui.note.as_deref(),
        Some("bless weather-tool-call.sample: waiting for its result…")
    );
    assert_eq!(
        answer(&mut state, &inputs),
        Cmd::ProposeBless("demo/weather-tool-call.sample".into())
    );
    // Once only; and on the sample shown, at once.
    assert_eq!(answer(&mut state, &inputs), Cmd::None);
    assert_eq!(
        update::on_action(&mut state, Action::Bless),
        Cmd::ProposeBless("demo/weather-tool-call.sample".into())
    );
    // A bless waiting for a sample the selection has left is dropped.
    update::on_action(&mut state, Action::PrevSample);
    update::on_action(&mut state, Action::Bless);
    update::on_action(&mut state, Action::NextSample);
    assert_eq!(answer(&mut state, &inputs), Cmd::None);
}

/// Granite-style tool calls: one JSON list of calls after `<|tool_call|>`, running to the end
/// token; the transform is written for one call, `transform_each` forgotten.
const LIST_TEMPLATE: &str = r#"{
  "defaults": {"role": "assistant"},
  "start_anchor": "<|start_of_role|>assistant<|end_of_role|>",
  "fields": {
    "tool_calls": {
      "open": "<|tool_call|>",
      "close": "<|end_of_text|>",
      "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
    },
    "content": {"close": "<|end_of_text|>"}
  }
}
"#;

const LIST_SAMPLE: &str = "--- prefix ---\n<|start_of_role|>user<|end_of_role|>Paris and Rome?<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>\n--- generation ---\n<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}]<|end_of_text|>\n";

#[test]
fn a_failed_transform_points_at_its_placeholder_with_advice_from_the_parsed_value() {
    let inputs = embedded(LIST_TEMPLATE, &[("calls.sample", LIST_SAMPLE)]);
    let mut state = loaded(&inputs, (120, 40), 0);
    let all = items(&state, 100);
    let first = &all[0];
    let text: Vec<String> = first.lines.iter().map(ToString::to_string).collect();
    let text = text.join("\n");
    // The reference's error, exactly, then where the region is, then the cause.
    assert!(
        text.starts_with(
            "error: KeyError: \"transform placeholder '{name}' is not defined. Available: ['content']\"\n  in region 'tool_calls' #1 at demo/calls.sample:5:14 (generation 1:14)\n  cause: the placeholder '{name}' in the transform of field 'tool_calls'\n  --> demo/template.json:9:62"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "= help: the parsed content is a list of 2 objects with keys `arguments` and `name`: add \"transform_each\": true"
        ),
        "{text}"
    );
    // Enter (and o) go to the placeholder in the template.
    assert_eq!(
        format!("{:?}", first.target),
        "Some(File { file: \"demo/template.json\", line: 9, column: 62 })"
    );
    // The lint warning at that place is not said twice; the other placeholder's stays.
    let lint: Vec<String> = all[1..]
        .iter()
        .map(|i| i.lines.iter().map(ToString::to_string).collect::<String>())
        .collect();
    assert!(
        !lint.iter().any(|l| l.contains("'{name}' names nothing")),
        "{lint:?}"
    );
    assert!(
        lint.iter()
            .any(|l| l.contains("'{arguments}' names nothing")),
        "{lint:?}"
    );
    // The region pane shows what the transform was given, and the error beside it.
    state.ui.region = Some(0);
    let screen = screen(&state);
    assert!(screen.contains("\"get_weather\""), "{screen}");
    assert!(screen.contains("KeyError"), "{screen}");
}

#[test]
fn error_messages_keep_their_line_breaks_in_the_region_pane() {
    // The truncated tool call fails in the JSON parser: "...as JSON.\nContent: ...".
    let mut state = loaded(&two_samples(TEMPLATE), (120, 40), 0);
    state.ui.region = state
        .analysis()
        .unwrap()
        .problem
        .as_ref()
        .and_then(|p| p.region);
    let text = screen(&state);
    assert!(!text.contains("JSON.Content:"), "{text}");
    assert!(text.contains("Content:"), "{text}");
}

#[test]
fn an_error_sample_keeps_its_status_word_beside_its_marks_at_80_columns() {
    let inputs = embedded(
        LIST_TEMPLATE,
        &[("calls-with-a-long-name.sample", LIST_SAMPLE)],
    );
    let mut state = loaded(&inputs, (80, 24), 0);
    state.session.samples[0].unstable = Some(true);
    let text = screen(&state);
    let row = text
        .lines()
        .find(|l| l.contains("✗ calls-with"))
        .expect("the sample's row");
    assert!(row.contains("… error ≈"), "{row}");
    // What the mark means, under the list.
    assert!(text.contains("≈ unstable"), "{text}");
    state.session.samples[0].warnings = 2;
    let text = screen(&state);
    assert!(text.contains("error ⚠2 ≈"), "{text}");
    assert!(text.contains("⚠2 warn ≈ unstable"), "{text}");
}

/// A scratch folder with the SmolLM3 template and samples whose expected sections are right,
/// wrong and missing.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rtbench-authoring-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("template.json"), TEMPLATE).unwrap();
    std::fs::write(dir.join("a-ok.sample"), WEATHER).unwrap();
    let changed = WEATHER.replace("\"city\": \"Paris\"", "\"city\": \"Lyon\"");
    assert_ne!(changed, WEATHER);
    let at = changed.find("--- expected ---").unwrap();
    // Only the expected section says Lyon: the result (Paris) changed against it.
    let changed = format!("{}{}", &WEATHER[..at], &changed[at..]);
    std::fs::write(dir.join("b-changed.sample"), changed).unwrap();
    let at = WEATHER.find("--- expected ---").unwrap();
    std::fs::write(dir.join("c-new.sample"), &WEATHER[..at]).unwrap();
    dir
}

fn from_folder(dir: &Path) -> Inputs {
    Inputs::from_args(&[dir.to_path_buf()]).unwrap()
}

#[test]
fn bless_all_lists_the_changed_samples_and_writes_only_on_enter() {
    let dir = scratch("all");
    let inputs = from_folder(&dir);
    let mut state = loaded(&inputs, (80, 24), 0);
    state.session.inputs = Some(Arc::new(inputs));
    // No runner: the job runs at once.
    assert_eq!(update::on_action(&mut state, Action::BlessAll), Cmd::None);
    let o = state.modes.overlay.as_ref().expect("a confirmation");
    assert_eq!(o.title, "bless all: 1 sample whose result changed");
    let texts = o.texts().join("\n");
    assert!(texts.contains("b-changed.sample:"), "{texts}");
    assert!(texts.contains("expected 'Lyon', got 'Paris'"), "{texts}");
    assert!(
        !texts.contains("a-ok.sample") && !texts.contains("c-new.sample"),
        "{texts}"
    );
    // Esc writes nothing; Enter confirms the listed writes.
    assert_eq!(update::on_action(&mut state, Action::Back), Cmd::None);
    assert_eq!(
        state.ui.note.as_deref(),
        Some("not blessed: nothing written")
    );
    update::on_action(&mut state, Action::BlessAll);
    let Cmd::WriteBless(writes) = update::on_action(&mut state, Action::Activate) else {
        panic!("Enter confirms the writes");
    };
    assert_eq!(writes.len(), 1);
    assert!(writes[0].path.ends_with("b-changed.sample"));
    assert!(writes[0].new.contains("\"Paris\""));
    let _ = std::fs::remove_dir_all(&dir);
}

fn rtbench(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(args)
        .output()
        .expect("rtbench runs")
}

/// MiniMax-style turns (`]~b]ai` and a line break open the answer, `[e~[` ends a turn).
const TURNS_TEMPLATE: &str = r#"{
  "defaults": {"role": "assistant"},
  "start_anchor": "]~b]ai\n",
  "fields": {"thinking": {"open": "<think>", "close": "</think>"}, "content": {"close": "[e~["}}
}
"#;

/// A sample written the way files for earlier versions were (a blank line for the prompt's
/// last line break): the anchor is not found, and the whole prompt is parsed. `parse` gives
/// the reference's result for the text as read, and says why on stderr.
#[test]
fn parse_says_when_a_blank_line_cost_the_start_anchor_its_line_break() {
    let dir = scratch("layout");
    std::fs::write(dir.join("template.json"), TURNS_TEMPLATE).unwrap();
    let sample = dir.join("hello.sample");
    std::fs::write(
        &sample,
        "--- prefix ---\n]~!b[]~b]system\nYou are helpful.[e~[\n]~b]user\nHi![e~[\n]~b]ai\n\n--- generation ---\nHello![e~[\n",
    )
    .unwrap();
    let t = dir.join("template.json");
    let o = rtbench(&[
        "parse",
        "--template",
        t.to_str().unwrap(),
        sample.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(0));
    // What the reference gives for this prefix (the anchor not found, the last turn's tail).
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "{\"role\":\"assistant\",\"content\":\"]~b]aiHello!\"}\n"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err,
        format!(
            "warning: {}:1:11: the start anchor ']~b]ai\\n' is not in the prefix as read: the blank line after the prefix is layout, so the prefix ends without the line break the anchor needs, and the whole prompt (earlier turns included) was parsed; write `--- prefix (ends with newline) ---` if the prompt ends with it (files written for earlier versions of rtbench meant that)\n",
            sample.display()
        )
    );
}

/// A failed transform: the reference's error line stays exactly as the reference raises it
/// (5.24 and 5.25 alike); under it, where the region is and where the mistake is, in the
/// template, with advice from the parsed value.
#[test]
fn parse_locates_a_failed_transform_at_its_placeholder() {
    let dir = scratch("transform");
    let t = dir.join("template.json");
    std::fs::write(&t, LIST_TEMPLATE).unwrap();
    let sample = dir.join("calls.sample");
    std::fs::write(&sample, LIST_SAMPLE).unwrap();
    for reference in ["5.24", "5.25"] {
        let o = rtbench(&[
            "--reference",
            reference,
            "parse",
            "--template",
            t.to_str().unwrap(),
            sample.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "error: KeyError: \"transform placeholder '{{name}}' is not defined. Available: ['content']\"
  --> field 'tool_calls' at {s}:5:14 (generation 1:14)
note: the placeholder '{{name}}' in the transform of field 'tool_calls'
 --> {t}:9:62
  |
9 |       \"transform\": {{\"type\": \"function\", \"function\": {{\"name\": \"{{name}}\", \"arguments\": \"{{arguments}}\"}}}}
  |                                                              ^^^^^^^^
  |
  = help: the parsed content is a list of 2 objects with keys `arguments` and `name`: add \"transform_each\": true to the field, so that the transform is applied to each object with its keys in scope (`{{name}}`)
",
                s = sample.display(),
                t = t.display()
            )
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The README's way to drop wrapper text: its template is the one under tests/data/wrapper,
/// whose expected sections the reference wrote, and it passes `test`, `lint --deny-warnings`
/// and the chunking check on each sample.
#[test]
fn the_readme_drops_wrapper_text_with_a_delimiter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("tests/data/wrapper");
    let template = std::fs::read_to_string(dir.join("template.json")).unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("```json\n{template}```")),
        "the README shows tests/data/wrapper/template.json as it is"
    );
    let d = dir.to_str().unwrap();
    let o = rtbench(&["test", d]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = rtbench(&["lint", "--deny-warnings", "--template", d, d]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for sample in ["fenced.sample", "plain.sample"] {
        let s = dir.join(sample);
        let o = rtbench(&["chunks", "--template", d, s.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
    // The fence is in no value: both give the same message.
    let parse = |s: &str| {
        let s = dir.join(s);
        rtbench(&["parse", "--template", d, s.to_str().unwrap()]).stdout
    };
    assert_eq!(parse("fenced.sample"), parse("plain.sample"));
}

/// The sample library's "Adding a sample" example reads as it says: its prefix ends with the
/// line break ChatML's anchor needs, and nothing is warned about.
#[test]
fn the_sample_librarys_example_reads_as_documented() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("samples/README.md")).unwrap();
    let start = doc.find("   ```text\n").expect("the example") + "   ```text\n".len();
    let end = start + doc[start..].find("   ```").unwrap();
    let example: String = doc[start..end]
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix("   ").unwrap_or(l)))
        .collect();
    let s = rtbench_tooling::sample::parse_sample(Path::new("x.sample"), &example).unwrap();
    assert_eq!(
        s.prefix.as_deref(),
        Some("<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n")
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}
