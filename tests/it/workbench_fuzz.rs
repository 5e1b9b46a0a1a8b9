//! Random input to the whole workbench: sequences of keys, pastes, mouse events and resizes
//! (to sizes down to one cell) go through `update` exactly as the run loop sends them, with
//! every re-parse the update asks for answered, and the screen drawn after each one. The
//! property: no sequence panics, the drawn screen is the size the state says, and the
//! selection, cursor and scrolls stay inside what they point into. No command that writes is
//! ever carried out (a confirmed bless only records that it was asked for).
//!
//! CI runs a few thousand events; `RTBENCH_FUZZ_CASES=1000 cargo test --release --test it
//! workbench_fuzz` runs the full-size campaign.

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rtbench::testing::update::{self, Cmd};
use rtbench::testing::{Inputs, Msg, State, Theme, request_for, view, worker};

const SAMPLES: [(&str, &str); 3] = [
    (
        "weather.sample",
        include_str!("../../samples/smollm3/weather-tool-call.sample"),
    ),
    (
        "truncated.sample",
        include_str!("../../samples/smollm3/truncated-tool-call.sample"),
    ),
    (
        "bare.txt",
        "<think>\nhm é😀\u{301}\n</think>\n<tool_call>\n{\"name\": 1",
    ),
];

fn inputs() -> Inputs {
    Inputs::embedded(
        "demo",
        include_str!("../../samples/smollm3/template.json"),
        &SAMPLES,
    )
}

fn key_code() -> impl Strategy<Value = KeyCode> {
    prop_oneof![
        // Every printable key a binding could use, and some that none does.
        (0x20u8..0x7f).prop_map(|b| KeyCode::Char(b as char)),
        prop::sample::select(vec!['é', '😀', '\u{301}', '中']).prop_map(KeyCode::Char),
        prop::sample::select(vec![
            KeyCode::Enter,
            KeyCode::Esc,
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Backspace,
            KeyCode::Delete,
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::F(1),
            KeyCode::F(5),
        ]),
    ]
}

fn event() -> impl Strategy<Value = Event> {
    let modifiers = prop::sample::select(vec![
        KeyModifiers::NONE,
        KeyModifiers::NONE,
        KeyModifiers::NONE,
        KeyModifiers::SHIFT,
        KeyModifiers::CONTROL,
        KeyModifiers::ALT,
    ]);
    prop_oneof![
        8 => (key_code(), modifiers).prop_map(|(c, m)| Event::Key(KeyEvent::new(c, m))),
        1 => ("[ -~\n\té😀]{0,40}").prop_map(Event::Paste),
        2 => (0u16..130, 0u16..45, 0u8..6).prop_map(|(column, row, k)| {
            let kind = match k {
                0 => MouseEventKind::Down(MouseButton::Left),
                1 => MouseEventKind::Up(MouseButton::Left),
                2 => MouseEventKind::Drag(MouseButton::Left),
                3 => MouseEventKind::ScrollDown,
                4 => MouseEventKind::ScrollUp,
                _ => MouseEventKind::Moved,
            };
            Event::Mouse(MouseEvent {
                kind,
                column,
                row,
                modifiers: KeyModifiers::NONE,
            })
        }),
        1 => (1u16..130, 1u16..45).prop_map(|(w, h)| Event::Resize(w, h)),
    ]
}

fn cases() -> u32 {
    std::env::var("RTBENCH_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(64)
}

/// Answers what the update asked for, as the run loop would, without writing anything.
/// Returns false when the workbench quits.
fn carry_out(state: &mut State, inputs: &Inputs, cmd: Cmd) -> bool {
    match cmd {
        Cmd::Quit => return false,
        Cmd::Reparse | Cmd::ReparseAll => {
            let req = request_for(state);
            update::on_report(state, worker::compute(inputs, &req));
        }
        // Writing, the editor, the mouse mode and job control are the run loop's: not here.
        _ => {}
    }
    true
}

fn check_screen(state: &State) -> Result<(), TestCaseError> {
    let (w, h) = state.ui.size;
    let mut t =
        Terminal::new(TestBackend::new(w, h)).map_err(|e| TestCaseError::fail(e.to_string()))?;
    t.draw(|f| view::draw(f, state))
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(t.backend().buffer().area.width, w);
    prop_assert_eq!(t.backend().buffer().area.height, h);
    prop_assert!(
        state.session.samples.is_empty() || state.ui.selected_sample < state.session.samples.len(),
        "selection {} of {} samples",
        state.ui.selected_sample,
        state.session.samples.len()
    );
    if let Some(a) = state.analysis() {
        prop_assert!(state.ui.cursor <= a.document.len(), "cursor past the text");
        prop_assert!(
            a.document.is_char_boundary(state.ui.cursor),
            "cursor inside a character"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5eed_f00d),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn any_input_sequence_keeps_the_workbench_whole(
        size in (1u16..130, 1u16..45),
        events in prop::collection::vec(event(), 1..120),
    ) {
        let inputs = inputs();
        let mut state = State::new(Theme::dark(), size);
        let req = request_for(&mut state);
        update::on_report(&mut state, worker::compute(&inputs, &req));
        check_screen(&state)?;
        for ev in events {
            let cmd = update::update(&mut state, Msg::Input(ev));
            if !carry_out(&mut state, &inputs, cmd) {
                break;
            }
            check_screen(&state)?;
        }
    }
}
