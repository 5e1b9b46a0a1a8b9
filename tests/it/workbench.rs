//! Whole-screen snapshots of the workbench at 80x24 and 120x40, rendered into ratatui's
//! `TestBackend`, with the styles of every cell (run-length encoded per row) as well as the
//! text; and behaviour tests of the update functions (keys, mouse, stale results).

use std::fmt::Write as _;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use rtbench::testing::Action;
use rtbench::testing::Inputs;
use std::sync::Arc;

use rtbench::testing::Msg;
use rtbench::testing::Theme;
use rtbench::testing::replay::{self, ReplayBuilt};
use rtbench::testing::view::raw;
use rtbench::testing::{Mode, Pane, State};
use rtbench::testing::{layout, request_for, update, view, worker};
use rtbench_engine::Reference;
use rtbench_engine::value::Value;
use rtbench_tooling::chunking::Chunking;
use rtbench_tooling::replay::Outcome;

const TEMPLATE: &str = include_str!("../../samples/smollm3/template.json");
const WEATHER: &str = include_str!("../../samples/smollm3/weather-tool-call.sample");
const TRUNCATED: &str = include_str!("../../samples/smollm3/truncated-tool-call.sample");

/// A template with a misspelt field key (a validation error with a caret).
const BAD_TEMPLATE: &str = r#"{
  "version": 1,
  "defaults": {"role": "assistant"},
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "thinking": {"open": "<think>", "close": "</think>", "contnet": "text"},
    "content": {"close": "<|im_end|>"}
  }
}
"#;

fn inputs(template: &'static str, samples: &[(&str, &'static str)]) -> Inputs {
    Inputs::embedded("demo", template, samples)
}

/// A state that has received the worker's answer for `inputs`, at `size`.
fn loaded(inputs: &Inputs, size: (u16, u16), sample: usize) -> State {
    loaded_with(Theme::dark(), inputs, size, sample)
}

fn loaded_with(theme: Theme, inputs: &Inputs, size: (u16, u16), sample: usize) -> State {
    let mut state = State::new(theme, size);
    state.ui.selected_sample = sample;
    let req = request_for(&mut state);
    update::on_report(&mut state, worker::compute(inputs, &req));
    state
}

fn render(state: &State) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(state.ui.size.0, state.ui.size.1)).unwrap();
    t.draw(|f| view::draw(f, state)).unwrap();
    t.backend().buffer().clone()
}

fn color(c: Color) -> String {
    match c {
        Color::Reset => "-".into(),
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        other => format!("{other:?}"),
    }
}

/// The screen as text, then each row's styled runs: `row: x..x fg/bg/modifiers`.
fn dump(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        let mut line = String::new();
        let mut x = 0;
        while x < area.width {
            // A wide character covers the next cell too.
            let symbol = buf[(x, y)].symbol();
            line.push_str(symbol);
            x += ratatui::text::Span::raw(symbol).width().max(1) as u16;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str("--- styles (row: columns fg/bg/modifiers; unstyled runs left out) ---\n");
    for y in 0..area.height {
        let mut runs: Vec<String> = Vec::new();
        let mut x = 0;
        while x < area.width {
            let c = &buf[(x, y)];
            let key = (c.fg, c.bg, c.modifier);
            let start = x;
            while x < area.width {
                let d = &buf[(x, y)];
                if (d.fg, d.bg, d.modifier) != key {
                    break;
                }
                x += 1;
            }
            if key != (Color::Reset, Color::Reset, Modifier::empty()) {
                let mods = if key.2.is_empty() {
                    String::new()
                } else {
                    format!("/{:?}", key.2)
                        .replace("Modifier(", "")
                        .replace(')', "")
                };
                runs.push(format!(
                    "{start}..{x} {}/{}{mods}",
                    color(key.0),
                    color(key.1)
                ));
            }
        }
        if !runs.is_empty() {
            let _ = writeln!(out, "{y:2}: {}", runs.join(", "));
        }
    }
    out
}

fn snapshot(name: &str, state: &State) {
    insta::assert_snapshot!(name, dump(&render(state)));
}

fn valid_inputs() -> Inputs {
    inputs(
        TEMPLATE,
        &[
            ("truncated-tool-call.sample", TRUNCATED),
            ("weather-tool-call.sample", WEATHER),
        ],
    )
}

#[test]
fn valid_template_screens() {
    for size in [(80, 24), (120, 40)] {
        let state = loaded(&valid_inputs(), size, 1);
        assert!(state.session.template_error.is_none());
        assert!(state.analysis().unwrap().message.is_some());
        snapshot(&format!("valid_{}x{}", size.0, size.1), &state);
    }
}

#[test]
fn invalid_template_screens_keep_the_last_good_result_marked_stale() {
    for size in [(80, 24), (120, 40)] {
        let mut state = loaded(&valid_inputs(), size, 1);
        let bad = inputs(BAD_TEMPLATE, &[("weather-tool-call.sample", WEATHER)]);
        let req = request_for(&mut state);
        update::on_report(&mut state, worker::compute(&bad, &req));
        let d = state
            .session
            .template_error
            .as_ref()
            .expect("a template error");
        assert_eq!(d.location.as_ref().unwrap().line, 6);
        assert!(state.is_stale());
        assert!(state.analysis().unwrap().message.is_some());
        // Focus the diagnostics so the caret is in view at both sizes.
        state.ui.focus = Pane::Diagnostics;
        snapshot(&format!("invalid_template_{}x{}", size.0, size.1), &state);
    }
}

#[test]
fn parse_error_in_a_tool_call_screens() {
    for size in [(80, 24), (120, 40)] {
        let state = loaded(&valid_inputs(), size, 0);
        let a = state.analysis().unwrap();
        let p = a.problem.as_ref().expect("a parse error");
        assert_eq!(
            a.field_names[a.regions.at(p.region.unwrap()).field],
            "tool_calls"
        );
        // The cursor starts on the error.
        assert_eq!(Some(state.ui.cursor), p.at);
        snapshot(&format!("tool_call_error_{}x{}", size.0, size.1), &state);
    }
}

#[test]
fn help_overlay_screens() {
    for size in [(80, 24), (120, 40)] {
        let mut state = loaded(&valid_inputs(), size, 1);
        update::on_action(&mut state, Action::Help);
        assert!(state.modes.help);
        snapshot(&format!("help_{}x{}", size.0, size.1), &state);
    }
}

#[test]
fn a_tiny_terminal_gets_a_message_not_a_crash() {
    let state = loaded(&valid_inputs(), (30, 8), 1);
    let text = dump(&render(&state));
    assert!(text.contains("terminal too"), "{text}");
    // And nothing panics at sizes around the limits.
    for (w, h) in [(1, 1), (40, 10), (41, 11), (60, 12), (200, 60)] {
        let state = loaded(&valid_inputs(), (w, h), 1);
        render(&state);
    }
}

#[test]
fn no_color_draws_without_colours() {
    let state = loaded_with(Theme::dark().without_color(), &valid_inputs(), (80, 24), 1);
    let buf = render(&state);
    for c in buf.content() {
        assert_eq!((c.fg, c.bg), (Color::Reset, Color::Reset));
    }
    // Delimiters stay visible through modifiers.
    assert!(
        buf.content()
            .iter()
            .any(|c| c.modifier.contains(Modifier::REVERSED))
    );
    snapshot("valid_no_color_80x24", &state);
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

#[test]
fn keys_move_the_cursor_and_select_the_region_under_it() {
    let mut state = loaded(&valid_inputs(), (120, 40), 1);
    let a = state.analysis().unwrap().clone();
    let first_tool = a.document.find("<tool_call>").unwrap();
    // n jumps region by region until the first tool call's open delimiter.
    for _ in 0..10 {
        if state.ui.cursor == first_tool {
            break;
        }
        let n = state.ui.keys.action(key(KeyCode::Char('n'))).unwrap();
        update::on_action(&mut state, n);
    }
    assert_eq!(state.ui.cursor, first_tool);
    let r = state.ui.region.unwrap();
    assert_eq!(a.field_names[a.regions.at(r).field], "tool_calls");
    update::on_action(&mut state, Action::Right);
    assert_eq!(state.ui.cursor, first_tool + 1);
    update::on_action(&mut state, Action::Down);
    assert_eq!(a.line_col(state.ui.cursor).0, a.line_col(first_tool).0 + 1);
    // Tab moves the focus; the samples pane selects with the arrows and asks for a parse.
    for _ in 0..4 {
        update::on_action(&mut state, Action::FocusNext);
    }
    assert_eq!(state.ui.focus, Pane::Samples);
    assert_eq!(
        update::on_action(&mut state, Action::Up),
        update::Cmd::Reparse
    );
    assert_eq!(state.ui.selected_sample, 0);
    assert_eq!(
        update::on_action(&mut state, Action::Quit),
        update::Cmd::Quit
    );
}

#[test]
fn a_click_in_the_raw_text_puts_the_cursor_on_that_character() {
    let mut state = loaded(&valid_inputs(), (120, 40), 1);
    let before = state.ui.cursor;
    // Row 1 of the screen is the first text row of the raw pane (inside its frame).
    update::on_mouse(
        &mut state,
        MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: 1,
            row: 1,
            modifiers: KeyModifiers::NONE,
        },
    );
    assert_eq!(state.ui.focus, Pane::Raw);
    let a = state.analysis().unwrap();
    let text = raw::text_area(
        layout::compute(Rect::new(0, 0, 120, 40), &state)
            .rect(Pane::Raw)
            .unwrap(),
        raw::shows_fold(&state),
    );
    let rows = raw::rows_of_line(a, state.ui.raw_top.0, usize::from(text.width));
    assert_eq!(state.ui.cursor, rows[state.ui.raw_top.1].start);
    assert_ne!(state.ui.cursor, before);
    // Scrolling the message pane does not move the cursor.
    update::on_mouse(
        &mut state,
        MouseEvent {
            kind: MouseEventKind::ScrollDown,
            column: 100,
            row: 3,
            modifiers: KeyModifiers::NONE,
        },
    );
    assert_eq!(state.ui.scroll[Pane::Message], 3);
}

#[test]
fn a_bare_txt_sample_warns_that_no_prefix_was_given() {
    let state = loaded(
        &inputs(
            TEMPLATE,
            &[("bare.txt", "<think>hm</think>Hello<|im_end|>")],
        ),
        (80, 24),
        0,
    );
    let a = state.analysis().unwrap();
    assert!(
        a.warnings
            .iter()
            .any(|w| w.message.starts_with("no prefix given"))
    );
    assert_eq!(a.message.as_ref().unwrap().len(), 3);
}

#[test]
fn an_answer_to_an_older_request_is_ignored() {
    let mut state = loaded(&valid_inputs(), (80, 24), 1);
    let old = request_for(&mut state);
    let _newer = request_for(&mut state);
    let bad = inputs(BAD_TEMPLATE, &[]);
    update::on_report(&mut state, worker::compute(&bad, &old));
    assert!(state.session.template_error.is_none());
    assert!(state.session.busy);
}

proptest::proptest! {
    // A fixed seed tries the same cases on every run, and nothing is written to disk: a failure
    // prints its shrunk generation, and the next run fails the same way.
    #![proptest_config(proptest::test_runner::Config {
        cases: 60,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x2545_f491_4f6c_dd1d),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })]

    /// Random generations made of delimiter pieces, multi-byte and control characters:
    /// analysing, moving the cursor everywhere and drawing never panics.
    #[test]
    fn random_generations_never_panic(
        pieces in proptest::collection::vec(
            proptest::sample::select(vec![
                "<think>",
                "</think>",
                "<tool_call>",
                "</tool_call>",
                "<|im_end|>",
                "<tool_",
                "</thi",
                "{\"name\": \"f\", \"arguments\": {}}",
                "{\"a\": ",
                "東京",
                "é",
                "\t",
                "\r\n",
                "\n",
                "x",
                "\u{301}",
            ]),
            0..30,
        ),
        with_prefix in proptest::bool::ANY,
        size in proptest::sample::select(vec![(80u16, 24u16), (41, 11), (120, 40)]),
    ) {
        let generation = pieces.concat();
        let prefix = if with_prefix {
            "<|im_start|>assistant\n<think>"
        } else {
            ""
        };
        let sample = format!("--- prefix ---\n{prefix}\n--- generation ---\n{generation}");
        let leaked: &'static str = Box::leak(sample.into_boxed_str());
        let inputs = inputs(TEMPLATE, &[("r.sample", leaked)]);
        let mut state = loaded(&inputs, size, 0);
        render(&state);
        for action in [
            Action::Top,
            Action::NextRegion,
            Action::Right,
            Action::Down,
            Action::Down,
            Action::LineEnd,
            Action::Right,
            Action::NextRegion,
            Action::PageDown,
            Action::Bottom,
            Action::Left,
            Action::Up,
            Action::PrevRegion,
        ] {
            update::on_action(&mut state, action);
            render(&state);
        }
    }
}

/// Requests that pile up while the parse thread works are served newest first: the last answer
/// is always for the newest request, and no answer comes back for a superseded one after it.
#[test]
fn the_parse_thread_serves_the_newest_request() {
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = worker::Worker::start(
        std::sync::Arc::new(valid_inputs()),
        move |r| {
            let _ = tx.send(r.seq);
        },
        |p| panic!("{p}"),
    );
    let mut state = State::new(Theme::dark(), (80, 24));
    for _ in 0..5 {
        worker.request(request_for(&mut state));
    }
    let mut seen = Vec::new();
    while let Ok(seq) = rx.recv_timeout(std::time::Duration::from_secs(10)) {
        seen.push(seq);
        if seq == 5 {
            break;
        }
    }
    assert_eq!(seen.last(), Some(&5), "{seen:?}");
    // A report can come again with the marks of the passes that follow it (the other
    // reference version, the chunking verdicts), never after a newer one.
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
}

#[test]
fn samples_get_the_test_verdict_and_differences_are_warnings() {
    const MATCHES: &str = "--- prefix ---\n--- generation ---\nHi<|im_end|>\n--- expected ---\n{\"role\": \"assistant\", \"content\": \"Hi\"}\n";
    const DIFFERS: &str = "--- prefix ---\n--- generation ---\nHo<|im_end|>\n--- expected ---\n{\"role\": \"assistant\", \"content\": \"Hi\"}\n";
    const FAILS_AS_EXPECTED: &str = "--- prefix ---\n--- generation ---\n<tool_call>{<|im_end|>\n--- expected ---\n{\"$error\": true}\n";
    const FAILS: &str = "--- prefix ---\n--- generation ---\n<tool_call>{<|im_end|>\n";
    let all = inputs(
        TEMPLATE,
        &[
            ("a.sample", MATCHES),
            ("b.sample", DIFFERS),
            ("c.sample", FAILS_AS_EXPECTED),
            ("d.sample", FAILS),
            ("e.sample", "no sections"),
        ],
    );
    let state = loaded(&all, (80, 24), 1);
    let labels: Vec<&str> = state
        .session
        .samples
        .iter()
        .map(|s| s.status.label())
        .collect();
    assert_eq!(labels, ["ok", "differs", "ok", "error", "unreadable"]);
    let a = state.analysis().unwrap();
    assert!(
        a.warnings
            .iter()
            .any(|w| w.message.contains("differs from the expected")
                && w.message.contains("content"))
    );
}

/// Without a terminal, `rtbench TEMPLATE SAMPLE` prints each sample's message (exit 1 when one
/// fails to parse), and `rtbench` alone prints the bundled sample's parse as before.
#[test]
fn without_a_terminal_the_messages_are_printed() {
    let bin = env!("CARGO_BIN_EXE_rtbench");
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new(bin)
        .arg(format!("{root}/samples/smollm3/template.json"))
        .arg(format!("{root}/samples/smollm3/weather-tool-call.sample"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("weather-tool-call.sample:\n{"), "{text}");
    assert!(text.contains("\"tool_calls\""));
    let out = std::process::Command::new(bin)
        .current_dir(root)
        .arg("samples/smollm3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("error: ValueError: json parser could not parse region as JSON.")
    );
    let out = std::process::Command::new(bin).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .starts_with("samples/smollm3/")
    );
    let out = std::process::Command::new(bin)
        .arg("no/such/template.json")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Reading the watched files (as every parse does) is not a change; writing one is, also when
/// an editor saves by renaming a temporary file over it.
#[test]
fn the_watcher_reports_changes_but_not_reads() {
    use rtbench::testing::watch::{self, WatchEvent};
    use std::time::Duration;
    let dir = std::env::temp_dir().join(format!("rtbench-watch-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("template.json");
    std::fs::write(&file, "{}").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let _w = watch::start(std::slice::from_ref(&file), move |e| {
        let _ = tx.send(e);
    })
    .unwrap();
    for _ in 0..5 {
        let _ = std::fs::read(&file).unwrap();
    }
    assert!(
        rx.recv_timeout(Duration::from_millis(400)).is_err(),
        "a read was reported as a change"
    );
    let tmp = dir.join(".template.json.tmp");
    std::fs::write(&tmp, "{\"a\": 1}").unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(5)),
        Ok(WatchEvent::Changed)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- stream replay ----

/// The weather sample in replay mode at `size`, at the first step.
fn replaying(size: (u16, u16)) -> State {
    let mut state = loaded(&valid_inputs(), size, 1);
    assert_eq!(
        update::on_action(&mut state, Action::Replay),
        update::Cmd::None
    );
    assert_eq!(state.modes.mode, Mode::Replay);
    state
}

fn go_to(state: &mut State, step: usize) {
    update::on_action(state, Action::Top);
    for _ in 0..step {
        update::on_action(state, Action::Right);
    }
    assert_eq!(state.modes.replay.as_ref().unwrap().step, step);
}

#[test]
fn a_replay_over_the_step_limit_opens_with_larger_chunks_and_goes_finer_on_request() {
    let mut state = loaded(&valid_inputs(), (80, 24), 1);
    state.ui.replay_max_steps = 100;
    update::on_action(&mut state, Action::Replay);
    let rs = state.modes.replay.as_ref().unwrap();
    let chars = state.analysis().unwrap().sample.generation.chars().count();
    assert!(chars > 300, "{chars}");
    assert_eq!(rs.size, chars.div_ceil(100));
    assert_eq!(rs.chunking(), Chunking::CodePoints(vec![rs.size]));
    assert!(rs.feeds <= 100 && rs.feeds > 50, "{}", rs.feeds);
    let note = state.ui.note.clone().unwrap_or_default();
    assert!(
        note.starts_with(&format!(
            "{chars} code points: streamed {} at a time",
            rs.size
        )) && note.contains("replay_max_steps"),
        "{note}"
    );
    // Smaller chunks when asked for: the limit only sets where the replay starts.
    let size = rs.size;
    update::on_action(&mut state, Action::Shorter);
    let rs = state.modes.replay.as_ref().unwrap();
    assert_eq!(rs.chunking(), Chunking::CodePoints(vec![size - 1]));
    assert!(rs.feeds > 100);
}

#[test]
fn replay_screens_at_several_steps() {
    for size in [(80, 24), (120, 40)] {
        let mut state = replaying(size);
        let name = |what: &str| format!("replay_{what}_{}x{}", size.0, size.1);
        snapshot(&name("start"), &state);

        // Fed one code point at a time, `<think>` arrives over several feeds: after `<th` it
        // is held back, and the step says which delimiter it might start.
        go_to(&mut state, 3);
        let rs = state.modes.replay.as_ref().unwrap();
        assert_eq!(rs.replay.held_text(3), "<th");
        let cands = rs.replay.held_candidates(3).unwrap();
        assert_eq!(cands.len(), 1);
        assert_eq!(cands[0].delimiter, "'<think>'");
        snapshot(&name("held_delimiter"), &state);

        // Mid tool call: the client shows the raw JSON so far and a preview that closes it.
        let r = Arc::clone(&rs.replay);
        let mid = (0..=r.last_step())
            .find(|&s| {
                r.partial_message(s)
                    .live
                    .is_some_and(|l| l.name == "tool_calls" && l.text.contains("Paris"))
            })
            .expect("a step inside the first tool call");
        go_to(&mut state, mid);
        snapshot(&name("tool_call_preview"), &state);

        update::on_action(&mut state, Action::Bottom);
        let rs = state.modes.replay.as_ref().unwrap();
        assert!(rs.replay.partial_message(rs.step).finished);
        snapshot(&name("end"), &state);
    }
}

#[test]
fn replay_keys_step_play_and_change_the_chunking() {
    let mut state = replaying((80, 24));
    go_to(&mut state, 5);
    let fed = |s: &State| {
        let rs = s.modes.replay.as_ref().unwrap();
        rs.replay.step(rs.step).fed_to
    };
    let before = fed(&state);
    // A bigger chunk size streams again and stays where the text had got to.
    update::on_action(&mut state, Action::Taller);
    let rs = state.modes.replay.as_ref().unwrap();
    assert_eq!(rs.chunking(), Chunking::CodePoints(vec![2]));
    assert!(fed(&state) >= before && fed(&state) <= before + 1);
    // Typed sizes.
    update::on_action(&mut state, Action::Prompt);
    for c in "3,5".chars() {
        update::on_prompt_key(&mut state, key(KeyCode::Char(c)));
    }
    update::on_prompt_key(&mut state, key(KeyCode::Enter));
    assert_eq!(state.modes.prompt, None);
    assert_eq!(
        state.modes.replay.as_ref().unwrap().chunking(),
        Chunking::CodePoints(vec![3, 5])
    );
    // A bad size is refused at the prompt (still open to fix it), the replay unchanged.
    update::on_action(&mut state, Action::Prompt);
    update::on_prompt_key(&mut state, key(KeyCode::Char('0')));
    update::on_prompt_key(&mut state, key(KeyCode::Enter));
    let error = state.modes.prompt.as_ref().and_then(|p| p.error.clone());
    assert!(error.unwrap().contains("'0'"));
    update::on_prompt_key(&mut state, key(KeyCode::Esc));
    assert_eq!(state.modes.mode, rtbench::testing::Mode::Replay);
    assert_eq!(
        state.modes.replay.as_ref().unwrap().chunking(),
        Chunking::CodePoints(vec![3, 5])
    );
    // The chunking kinds cycle.
    update::on_action(&mut state, Action::NextChunking);
    assert!(matches!(
        state.modes.replay.as_ref().unwrap().chunking(),
        Chunking::Random { .. }
    ));
    update::on_action(&mut state, Action::NextChunking);
    assert_eq!(
        state.modes.replay.as_ref().unwrap().chunking(),
        Chunking::Tokens
    );
    update::on_action(&mut state, Action::NextChunking);
    assert_eq!(
        state.modes.replay.as_ref().unwrap().chunking(),
        Chunking::Bytes(2)
    );

    // Play runs to the end, one step per tick, and stops there.
    update::on_action(&mut state, Action::Top);
    update::on_action(&mut state, Action::PlayPause);
    let last = state.modes.replay.as_ref().unwrap().replay.last_step();
    for i in 1..=last + 3 {
        update::on_tick(&mut state);
        assert_eq!(state.modes.replay.as_ref().unwrap().step, i.min(last));
    }
    assert!(!state.modes.replay.as_ref().unwrap().playing);

    // Selecting a timeline event shows the step that made it.
    update::on_action(&mut state, Action::Top);
    update::on_action(&mut state, Action::Down);
    let rs = state.modes.replay.as_ref().unwrap();
    let e = rs.selected_event.unwrap();
    assert_eq!(
        e, 0,
        "↓ from a step without events selects the next event, not the one after"
    );
    assert_eq!(rs.step, rs.replay.step_of_event(e));

    // Esc goes back to inspecting; q still quits.
    update::on_action(&mut state, Action::Back);
    assert_eq!(state.modes.mode, Mode::Inspect);
    assert!(state.modes.replay.is_none());
}

#[test]
fn replay_follows_a_template_edit() {
    let mut state = replaying((80, 24));
    update::on_action(&mut state, Action::Taller);
    go_to(&mut state, 4);
    // The thinking delimiters are renamed in the file: the replay streams the new template
    // with the same chunking.
    let edited = TEMPLATE.replace("\"thinking\"", "\"reasoning\"");
    let leaked: &'static str = Box::leak(edited.into_boxed_str());
    let next = inputs(
        leaked,
        &[
            ("truncated-tool-call.sample", TRUNCATED),
            ("weather-tool-call.sample", WEATHER),
        ],
    );
    let req = request_for(&mut state);
    update::on_report(&mut state, worker::compute(&next, &req));
    let rs = state.modes.replay.as_ref().unwrap();
    assert_eq!(rs.chunking(), Chunking::CodePoints(vec![2]));
    assert_eq!(rs.replay.field_name(0), "reasoning");
    let Outcome::Message(m) = rs.replay.outcome() else {
        panic!("parses")
    };
    assert!(m.contains_key("reasoning"));
}

// ---- explain and chunking-check overlays ----

#[test]
fn explain_overlay_shows_the_engine_explanation_and_switches_fields() {
    let mut state = loaded(&valid_inputs(), (80, 24), 1);
    let a = Arc::clone(state.analysis().unwrap());
    let selected_field = a.regions.at(state.ui.region.unwrap()).field;
    update::on_action(&mut state, Action::Explain);
    let expected = |field: usize| {
        let s = &a.sample;
        rtbench_tooling::explain::explain(
            &a.template,
            s.prefix.as_deref().unwrap(),
            &s.generation,
            s.tools.as_ref(),
            &a.field_names[field],
        )
        .unwrap()
        .with_places(rtbench_tooling::place::Places::of_sample(s, &a.sample_name))
        .lines()
    };
    let o = state.modes.overlay.as_ref().expect("an explanation");
    assert_eq!(o.field, Some(selected_field));
    assert_eq!(o.texts(), expected(selected_field));
    // → explains the next field; keys do not reach the panes meanwhile.
    let cursor = state.ui.cursor;
    update::on_action(&mut state, Action::Right);
    let next = (selected_field + 1) % a.field_names.len();
    assert_eq!(
        state.modes.overlay.as_ref().unwrap().texts(),
        expected(next)
    );
    assert_eq!(state.ui.cursor, cursor);
    let screen = dump(&render(&state));
    assert!(
        screen.contains(&format!("explain {}", a.field_names[next])),
        "{screen}"
    );
    update::on_action(&mut state, Action::Back);
    assert!(state.modes.overlay.is_none());
    assert_eq!(
        state.modes.mode,
        Mode::Inspect,
        "Esc closed the overlay, not the app"
    );
}

#[test]
fn chunking_check_overlay_passes_a_sample_and_finds_a_chunking_dependent_template() {
    let mut state = loaded(&valid_inputs(), (80, 24), 1);
    update::on_action(&mut state, Action::CheckChunkings);
    let o = state.modes.overlay.as_ref().unwrap();
    assert_eq!(o.title, "chunking check: every chunking agrees");
    assert!(
        o.texts()[0].contains("all 41 chunkings agree"),
        "{:?}",
        o.lines
    );
    update::on_action(&mut state, Action::Back);

    // A close whose negative lookahead cannot see text not yet fed (the reference's results
    // for it are recorded in tests/data/replay): size 1 changes the result.
    const PLAN: &str = r#"{"version": 1, "defaults": {"role": "assistant"}, "start_anchor": "<|im_start|>assistant\n",
      "fields": {"plan": {"open": "Plan:\n", "close_pattern": "\\n\\n(?!- )"}, "content": {"close": "<|im_end|>"}}}"#;
    const SAMPLE: &str = "--- prefix ---\n<|im_start|>user\nBook me a table at the café.<|im_end|>\n<|im_start|>assistant\n\n--- generation ---\nPlan:\n- check the café's opening hours\n\n- book a table for two (東京 branch)\n\nI'll check the hours first, then book the table.<|im_end|>\n";
    let mut state = loaded(&inputs(PLAN, &[("plan.sample", SAMPLE)]), (80, 24), 0);
    update::on_action(&mut state, Action::CheckChunkings);
    let o = state.modes.overlay.as_ref().unwrap();
    assert_eq!(
        o.title,
        "chunking check: the result depends on the chunking"
    );
    let text = o.texts().join("\n");
    assert!(text.contains("smallest: size 1"), "{text}");
    assert!(text.contains("$.message.plan"), "{text}");
}

#[test]
fn replay_of_a_feed_that_fails_counts_feeds_and_keeps_the_unfed_text() {
    const BAD: &str = "--- prefix ---\n--- generation ---\n<tool_call>\n{bad json}\n</tool_call>\nafter text é<|im_end|>\n";
    let mut state = loaded(&inputs(TEMPLATE, &[("bad.sample", BAD)]), (80, 24), 0);
    update::on_action(&mut state, Action::Replay);
    update::on_action(&mut state, Action::Bottom);
    let rs = state.modes.replay.as_ref().unwrap();
    let step = rs.replay.step(rs.step);
    assert!(step.error.is_some());
    let screen = dump(&render(&state));
    assert!(
        screen.contains(&format!("feed {} of {}", rs.feeds, rs.feeds)),
        "{screen}"
    );
    let total = rs.replay.document().chars().count();
    let fed = rs.replay.document()[..step.fed_to].chars().count();
    assert!(fed < total);
    assert!(
        screen.contains(&format!("fed {fed}/{total} cp")),
        "{screen}"
    );
    assert!(
        screen.contains("after text é"),
        "the unfed text is shown: {screen}"
    );
    assert!(
        screen.contains("error: ValueError: json parser"),
        "{screen}"
    );
    assert!(
        !screen.contains("live tool_calls"),
        "no live region after the failure: {screen}"
    );
}

#[test]
fn lint_warnings_appear_in_the_diagnostics() {
    // The implicit field has no close: the reference loads this, but it is likely a mistake.
    const NO_CLOSE: &str = "{\"start_anchor\": \"<|im_start|>assistant\\n\",\n  \"fields\": {\"thinking\": {\"open\": \"<think>\", \"close\": \"</think>\"},\n   \"content\": {}}}";
    let state = loaded(&inputs(NO_CLOSE, &[("w.sample", WEATHER)]), (120, 40), 0);
    assert!(state.session.template_error.is_none());
    assert_eq!(state.session.lint.len(), 1);
    let (lines, errors, warnings) = view::diagnostics::lines(&state, 100);
    assert_eq!(errors, 0);
    assert!(warnings >= 1);
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let text = text.join("\n");
    assert!(
        text.contains("field 'content' takes leftover text and has no close"),
        "{text}"
    );
    assert!(text.contains("demo/template.json:3:4"), "{text}");
    // The bundled template has none.
    assert!(loaded(&valid_inputs(), (80, 24), 1).session.lint.is_empty());
}

/// The workbench on a long sample, in replay mode, its replays built on a replay lane whose
/// builds come back on the returned channel (the run loop forwards them as messages the same
/// way).
fn replaying_a_large_sample() -> (State, std::sync::mpsc::Receiver<ReplayBuilt>) {
    let body = "The forecast for Paris is mild. ".repeat(9000);
    let text =
        format!("--- prefix ---\n--- generation ---\n<think>\nplan\n</think>\n{body}<|im_end|>\n");
    let leaked: &'static str = Box::leak(text.into_boxed_str());
    let mut state = loaded(&inputs(TEMPLATE, &[("big.sample", leaked)]), (80, 24), 0);
    let (tx, rx) = std::sync::mpsc::channel();
    state.work.replays = Some(replay::lane(
        move |b| {
            let _ = tx.send(b);
        },
        |p| panic!("{p}"),
    ));
    update::on_action(&mut state, Action::Replay);
    (state, rx)
}

/// Waits for the replay being built and hands it to the update, as the run loop does.
fn until_built(state: &mut State, built: &std::sync::mpsc::Receiver<ReplayBuilt>) {
    while state.modes.replay.as_ref().unwrap().is_building() {
        let b = built
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the background build never finished");
        update::update(state, Msg::Replay(b));
    }
}

#[test]
fn esc_stops_a_replay_being_built_and_keeps_the_one_shown() {
    // The first build: only the prefix was shown, so Esc leaves the replay.
    let (mut state, built) = replaying_a_large_sample();
    assert!(state.modes.replay.as_ref().unwrap().is_building());
    update::on_action(&mut state, Action::Back);
    assert!(state.modes.replay.is_none());
    assert_eq!(state.modes.mode, Mode::Inspect);
    assert_eq!(
        state.ui.note.as_deref(),
        Some("stopped streaming the replay")
    );
    // A rebuild (a bigger chunk size): Esc stops it and the replay shown stays.
    update::on_action(&mut state, Action::Replay);
    until_built(&mut state, &built);
    let feeds = state.modes.replay.as_ref().unwrap().feeds;
    update::on_action(&mut state, Action::Taller);
    assert!(state.modes.replay.as_ref().unwrap().is_building());
    update::on_action(&mut state, Action::Back);
    let rs = state.modes.replay.as_ref().unwrap();
    assert!(!rs.is_building());
    assert_eq!(rs.feeds, feeds, "the size-1 replay stays on screen");
    assert!(dump(&render(&state)).contains("stopped streaming the replay"));
    // A second Esc leaves replay mode.
    update::on_action(&mut state, Action::Back);
    assert!(state.modes.replay.is_none());
}

#[test]
fn a_large_sample_is_streamed_in_the_background() {
    let (mut state, built) = replaying_a_large_sample();
    // At once: the prefix, and the real replay on its way.
    let rs = state.modes.replay.as_ref().unwrap();
    assert!(rs.is_building() && rs.placeholder);
    assert_eq!(rs.feeds, 0);
    let screen = dump(&render(&state));
    assert!(
        screen.contains("⟳ streaming") && screen.contains("Esc stops"),
        "{screen}"
    );
    // The lane's message shows it when it is ready.
    until_built(&mut state, &built);
    let rs = state.modes.replay.as_ref().unwrap();
    assert!(!rs.placeholder);
    assert_eq!(rs.chunking(), Chunking::CodePoints(vec![1]));
    assert_eq!(rs.feeds, rs.replay.document().chars().count());
    let Outcome::Message(m) = rs.replay.outcome() else {
        panic!("parses")
    };
    assert_eq!(m.get("thinking").and_then(|v| v.as_str()), Some("plan"));
}

// ---- explanations and chunking checks off the UI thread ----

/// A loaded state whose jobs run on a real tooling thread; their results come back on the
/// returned channel (the run loop forwards them to its event channel the same way).
fn with_tooling_thread(
    state: &mut State,
) -> std::sync::mpsc::Receiver<rtbench::testing::jobs::Done> {
    let (tx, rx) = std::sync::mpsc::channel();
    state.work.runner = Some(rtbench::testing::jobs::Runner::start(
        move |d| {
            let _ = tx.send(d);
        },
        |p| panic!("{p}"),
    ));
    rx
}

#[test]
fn explain_runs_on_the_tooling_thread_with_a_spinner_and_shows_the_same_overlay() {
    // What the explanation looks like when run at once (no runner, as the tests above).
    let mut inline = loaded(&valid_inputs(), (80, 24), 1);
    update::on_action(&mut inline, Action::Explain);
    let expected = inline.modes.overlay.clone().expect("an explanation");

    let mut state = loaded(&valid_inputs(), (80, 24), 1);
    let rx = with_tooling_thread(&mut state);
    update::on_action(&mut state, Action::Explain);
    assert!(state.modes.overlay.is_none(), "not computed on this thread");
    let screen = dump(&render(&state));
    assert!(screen.contains("explaining"), "{screen}");
    assert!(screen.contains("Esc cancels"), "{screen}");
    // The clock turns the spinner.
    let before = dump(&render(&state));
    assert!(update::on_spinner_tick(&mut state));
    assert_ne!(dump(&render(&state)), before);

    let done = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the explanation arrives");
    update::on_job_done(&mut state, done);
    assert!(state.work.job.is_none());
    assert_eq!(state.modes.overlay.as_ref(), Some(&expected));
    assert_eq!(dump(&render(&state)), dump(&render(&inline)));
}

#[test]
fn esc_cancels_a_chunking_check_on_the_tooling_thread() {
    let mut state = loaded(&valid_inputs(), (80, 24), 1);
    let rx = with_tooling_thread(&mut state);
    update::on_action(&mut state, Action::CheckChunkings);
    assert!(dump(&render(&state)).contains("checking chunkings"));
    assert_eq!(
        update::on_action(&mut state, Action::Back),
        update::Cmd::None
    );
    assert!(state.work.job.is_none());
    let screen = dump(&render(&state));
    assert!(!screen.contains("checking chunkings"), "{screen}");
    assert!(screen.contains("chunking check cancelled"), "{screen}");
    // The check cannot be interrupted: if it finished before Esc, its result arrives, and is
    // dropped (after Esc it is not even sent).
    if let Ok(late) = rx.recv_timeout(std::time::Duration::from_millis(500)) {
        update::on_job_done(&mut state, late);
    }
    assert!(state.modes.overlay.is_none());
    // A new request after the cancel is answered.
    update::on_action(&mut state, Action::CheckChunkings);
    let done = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the check arrives");
    update::on_job_done(&mut state, done);
    assert_eq!(
        state.modes.overlay.as_ref().unwrap().title,
        "chunking check: every chunking agrees"
    );
}

#[test]
fn the_region_pane_scrolls_past_65535_rows() {
    let template = r#"{"version": 1, "defaults": {"role": "assistant"}, "start_anchor": "A:", "fields": {"content": {"close": "<|im_end|>"}}}"#;
    let body: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
    let sample: &'static str = Box::leak(
        format!("--- prefix ---\nA:\n--- generation ---\n{body}<|im_end|>\n").into_boxed_str(),
    );
    let mut state = loaded(&inputs(template, &[("long.sample", sample)]), (120, 40), 0);
    let a = state.analysis().unwrap().clone();
    assert_eq!(a.regions.len(), 1, "one content region");
    state.ui.region = Some(0);
    state.ui.focus = Pane::Region;
    state.ui.scroll[Pane::Region] = 80_000;
    update::on_action(&mut state, Action::Left);
    assert_eq!(state.ui.scroll[Pane::Region], 80_000);
    // Row 0 is the column heading, so row 80,000 is the line numbered 79,999: the body
    // column starts there.
    let screen = dump(&render(&state));
    assert!(
        screen.contains("┃line 79999 ")
            && screen.contains("┃line 80000 ")
            && !screen.contains("┃line 79998 "),
        "{screen}"
    );
    // End goes to the last lines, not to a limit of the widget.
    update::on_action(&mut state, Action::Bottom);
    assert!(
        state.ui.scroll[Pane::Region] > 99_000,
        "{}",
        state.ui.scroll[Pane::Region]
    );
    let screen = dump(&render(&state));
    assert!(screen.contains("line 99999"), "{screen}");
}

#[test]
fn joiners_and_combining_marks_keep_every_border_in_its_column() {
    let template = r#"{"version": 1, "defaults": {"role": "assistant"}, "start_anchor": "A:", "fields": {"content": {"close": "<|im_end|>"}}}"#;
    let sample = "--- prefix ---\nA:\n--- generation ---\n\u{301}Fam\u{200d}\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467} cafe\u{301} x\u{301}\u{302}\u{303} The end of it all, in many words\n<|im_end|>\n";
    let mut state = loaded(&inputs(template, &[("zwj.sample", sample)]), (80, 24), 0);
    state.ui.region = Some(0);
    let buf = render(&state);
    // Every row of the right-hand panes ends with a border in the last column, and the region
    // pane's column separators stay where the layout put them.
    let right = buf.area.width - 1;
    for y in 0..16 {
        let s = buf[(right, y)].symbol();
        assert!(
            matches!(s, "│" | "┐" | "┘" | "┃" | "┓" | "┛"),
            "row {y}: {s:?}\n{}",
            dump(&buf)
        );
    }
    // A wide character never covers the next cell's border.
    for y in 0..buf.area.height {
        for x in 0..right {
            let wide = ratatui::text::Span::raw(buf[(x, y)].symbol()).width() > 1;
            let next = buf[(x + 1, y)].symbol();
            assert!(
                !(wide && matches!(next, "│" | "┃")),
                "row {y}: {:?} at {x} covers the border\n{}",
                buf[(x, y)].symbol(),
                dump(&buf)
            );
        }
    }
    let screen = dump(&buf);
    assert!(
        screen.contains("\\u200d"),
        "the joiners are shown escaped in JSON:\n{screen}"
    );
}

#[test]
fn the_portability_overlay_tables_each_engine_on_every_sample() {
    let template = include_str!("../data/portability/accents/template.json");
    let accented = include_str!("../data/portability/accents/accented.sample");
    let plain = "--- prefix ---\n<A>\n--- generation ---\nhi <cafe>body</x>";
    let inputs = inputs(
        template,
        &[("accented.sample", accented), ("plain.sample", plain)],
    );
    let mut state = loaded(&inputs, (120, 40), 1);
    state.session.inputs = Some(std::sync::Arc::new(inputs));
    let p = state.ui.keys.action(key(KeyCode::Char('P'))).unwrap();
    assert_eq!(p, Action::Portability);
    update::on_action(&mut state, p);
    let o = state.modes.overlay.as_ref().expect("the report");
    assert_eq!(o.title, "portability: 1 problem");
    let texts = o.texts();
    assert_eq!(texts[0], "on 2 samples");
    let table: Vec<&str> = texts[1..3].iter().map(|l| l.trim_end()).collect();
    assert_eq!(
        table,
        [
            "  pattern           regex  fancy-regex  ecmascript",
            "  tag.open_pattern  same   same         differs (1 sample)"
        ]
    );
    let text = texts.join("\n");
    assert!(
        text.contains("field 'tag': open_pattern matches differently in ecmascript (1 sample)")
            && text.contains("demo/accented.sample:4:4"),
        "{text}"
    );
    // The overlay draws at 80x24 too.
    state.ui.size = (80, 24);
    let screen = dump(&render(&state));
    assert!(screen.contains("portability: 1 problem"), "{screen}");
}

// The reference version: the status bar shows the one in force, the list marks a sample that
// parses differently under the other, its diagnostics say how, and a key switches. The sample
// that differs keeps "42" under 5.25 (its expected section, from the 5.25 oracle) and gets 42
// under 5.24 (see its note).

const QWEN3_TEMPLATE: &str = include_str!("../../samples/qwen3/template.json");
const VERSIONED: &str = include_str!("../../samples/qwen3/string-or-integer-argument.sample");
const AGREEING: &str = include_str!("../../samples/qwen3/one-tool-call.sample");

fn versioned_inputs() -> Inputs {
    inputs(
        QWEN3_TEMPLATE,
        &[
            ("one-tool-call.sample", AGREEING),
            ("string-or-integer-argument.sample", VERSIONED),
        ],
    )
}

/// A state that has received the worker's answer under `reference`, with the comparison
/// between versions that follows it done.
fn compared(inputs: &Inputs, size: (u16, u16), sample: usize, reference: Reference) -> State {
    let mut state = State::new(Theme::dark(), size);
    state.session.reference = reference;
    state.ui.selected_sample = sample;
    let req = request_for(&mut state);
    update::on_report(&mut state, worker::compute_with_versions(inputs, &req));
    state
}

/// The order id of the message on screen.
fn order_id(state: &State) -> Value {
    let m = state.analysis().unwrap().message.as_ref().unwrap();
    let Some(Value::List(calls)) = m.get("tool_calls") else {
        panic!("no tool calls in {m:?}")
    };
    let Value::Dict(call) = &calls[0] else {
        panic!()
    };
    let Some(Value::Dict(f)) = call.get("function") else {
        panic!()
    };
    let Some(Value::Dict(args)) = f.get("arguments") else {
        panic!()
    };
    args["order_id"].clone()
}

#[test]
fn a_sample_that_parses_differently_under_the_other_version_screens() {
    for size in [(80, 24), (120, 40)] {
        let state = compared(&versioned_inputs(), size, 1, Reference::V5_25);
        assert_eq!(order_id(&state), Value::from("42"));
        let marks: Vec<Option<Reference>> = state
            .session
            .samples
            .iter()
            .map(|e| e.versions.as_ref().map(|v| v.other))
            .collect();
        assert_eq!(marks, [None, Some(Reference::V5_24)]);
        let text = dump(&render(&state));
        assert!(text.contains(" ref 5.25 "), "{text}");
        assert!(text.contains("under 5.24 this sample"), "{text}");
        snapshot(&format!("versions_{}x{}", size.0, size.1), &state);
    }
}

#[test]
fn switching_the_version_parses_again_under_it_and_keeps_the_place() {
    let inputs = versioned_inputs();
    let mut state = compared(&inputs, (80, 24), 1, Reference::V5_25);
    // Somewhere in the text, with another region selected and the message scrolled.
    for _ in 0..2 {
        update::on_action(&mut state, Action::NextRegion);
    }
    update::on_action(&mut state, Action::Down);
    update::on_action(&mut state, Action::FocusPane(1));
    for _ in 0..3 {
        update::on_action(&mut state, Action::Down);
    }
    update::on_action(&mut state, Action::FocusPane(0));
    let (cursor, region, top) = (state.ui.cursor, state.ui.region, state.ui.raw_top);
    let scroll = state.ui.scroll;
    assert!(scroll[Pane::Message] > 0 && region.is_some_and(|r| r > 0));

    assert_eq!(
        update::on_action(&mut state, Action::SwitchReference),
        update::Cmd::ReparseAll
    );
    assert_eq!(state.session.reference, Reference::V5_24);
    // The old comparison's marks go until the new one comes.
    assert!(state.session.samples.iter().all(|e| e.versions.is_none()));
    let req = request_for(&mut state);
    assert_eq!(req.reference, Reference::V5_24);
    update::on_report(&mut state, worker::compute_with_versions(&inputs, &req));

    assert_eq!(order_id(&state), Value::Int(42));
    assert_eq!(
        state.analysis().unwrap().template.reference(),
        Reference::V5_24
    );
    assert_eq!(
        (
            state.ui.selected_sample,
            state.ui.cursor,
            state.ui.region,
            state.ui.raw_top
        ),
        (1, cursor, region, top)
    );
    assert_eq!(state.ui.scroll, scroll);
    let mark = state.session.samples[1]
        .versions
        .as_ref()
        .expect("still marked");
    assert_eq!(mark.other, Reference::V5_25);
    assert!(
        mark.warning.message.starts_with(
            "under 5.25 this sample parses differently: \
             $.tool_calls[0].function.arguments.order_id: 42 under 5.24, '42' under 5.25"
        ),
        "{}",
        mark.warning.message
    );
    assert!(state.session.samples[0].versions.is_none());
    // Its expected section is 5.25's result: under 5.24 it differs from it.
    assert_eq!(state.session.samples[1].status.label(), "differs");
    snapshot("versions_switched_80x24", &state);

    // And back.
    update::on_action(&mut state, Action::SwitchReference);
    let req = request_for(&mut state);
    update::on_report(&mut state, worker::compute_with_versions(&inputs, &req));
    assert_eq!(state.session.reference, Reference::V5_25);
    assert_eq!(order_id(&state), Value::from("42"));
    assert_eq!(
        state.session.samples[1].versions.as_ref().map(|v| v.other),
        Some(Reference::V5_24)
    );
}

#[test]
fn enter_on_the_version_warning_goes_to_the_first_event_that_differs() {
    let mut state = compared(&versioned_inputs(), (120, 40), 1, Reference::V5_25);
    update::on_action(&mut state, Action::FocusPane(3));
    let a = Arc::clone(state.analysis().unwrap());
    let items = rtbench::testing::view::diagnostics::items(&state, 60);
    let n = items
        .iter()
        .position(|i| {
            i.lines
                .iter()
                .any(|l| l.to_string().contains("under 5.24 this sample"))
        })
        .expect("the version warning is listed");
    state.ui.diagnostic = n;
    update::on_action(&mut state, Action::Activate);
    // The call's close, where the value 5.24 casts is reported.
    let generation_at = a.prefix_len;
    let close = generation_at + a.document[generation_at..].find("</tool_call>").unwrap();
    assert_eq!(state.ui.cursor, close);
}

#[test]
fn the_version_mark_shrinks_to_one_character_when_the_list_is_narrow() {
    let inputs = versioned_inputs();
    let row = |size: (u16, u16)| {
        let mut state = compared(&inputs, size, 0, Reference::V5_25);
        state.session.samples[1].warnings = 12;
        state.session.samples[1].unstable = Some(true);
        let text = dump(&render(&state));
        text.lines()
            .find(|l| l.contains("string-"))
            .unwrap_or_else(|| panic!("no row for the sample:\n{text}"))
            .to_string()
    };
    let wide = row((120, 40));
    assert!(
        wide.contains("⚠12 ≈ ≠5.24") || wide.contains("12 warnings"),
        "{wide}"
    );
    let narrow = row((64, 24));
    assert!(narrow.contains("⚠12 ≈ ≠"), "{narrow}");
    assert!(!narrow.contains("≠5.24"), "{narrow}");
}

#[test]
fn the_grammar_mark_names_where_the_grammar_stops_and_enter_goes_there() {
    // Granite's thinking close needs `<response>`, a `<|` or another character after it:
    // `<tool_call>` there leaves thinking open (the parser takes it as text), and a grammar-
    // constrained model could not have written its `t`.
    const SAMPLE: &str = "--- prefix ---\n<|start_of_role|>assistant<|end_of_role|>\n--- generation ---\n<think>221 = 13 * 17.</think>\n<tool_call>oops\n";
    let inputs = Inputs::embedded(
        "granite",
        include_str!("../../samples/granite-3.3/template.json"),
        &[("g.sample", SAMPLE)],
    );
    let mut state = loaded(&inputs, (120, 40), 0);
    update::on_action(&mut state, Action::FocusPane(3));
    let a = Arc::clone(state.analysis().unwrap());
    let items = rtbench::testing::view::diagnostics::items(&state, 200);
    let n = items
        .iter()
        .position(|i| i.lines.iter().any(|l| l.to_string().contains("grammar:")))
        .expect("the grammar's mark is listed");
    let text: String = items[n].lines.iter().map(|l| l.to_string()).collect();
    assert!(
        text.contains("refuses the generation from granite/g.sample:5:2 (generation 2:2)"),
        "{text}"
    );
    state.ui.diagnostic = n;
    update::on_action(&mut state, Action::Activate);
    let t = a.document.find("<tool_call>").unwrap() + 1;
    assert_eq!(state.ui.cursor, t);
}
