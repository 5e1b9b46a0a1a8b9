//! Edit-to-new-frame latency of the workbench for a 100 KB sample: from the moment a file
//! change is reported (after the watcher's debounce) to a rendered frame in a `TestBackend`:
//! request to the parse thread, files re-read, template and samples parsed, analysis and JSON
//! highlighting, the report taken into the state, and the whole screen drawn.
//!
//! `cargo bench --bench latency` prints the median (target: under 16 ms) and other figures.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rtbench::testing::State;
use rtbench::testing::Theme;
use rtbench::testing::worker::Worker;
use rtbench::testing::{Inputs, Source};
use rtbench::testing::{request_for, update, view};

const TEMPLATE: &str = include_str!("../samples/smollm3/template.json");

/// A SmolLM3-style sample of about `size` bytes: long thinking, tool calls, long content.
fn big_sample(size: usize, variant: usize) -> String {
    let mut generation = String::from("<think>\n");
    let sentence = "The user wants the weather in several cities; I will call the tool for each. ";
    while generation.len() < size * 2 / 5 {
        generation.push_str(sentence);
        if generation.len() % 7 == 0 {
            generation.push('\n');
        }
    }
    generation.push_str("\n</think>\n");
    for i in 0..40 {
        generation.push_str(&format!(
            "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"City {i}\", \"days\": {}}}}}\n</tool_call>\n",
            i % 7
        ));
    }
    let content = "Here is the forecast, city by city, with details about wind, rain and sun.\n";
    while generation.len() < size {
        generation.push_str(content);
    }
    generation.push_str(&format!("Variant {variant}.<|im_end|>"));
    format!(
        "--- prefix ---\n<|im_start|>user\nWeather please.<|im_end|>\n<|im_start|>assistant\n\n--- generation ---\n{generation}"
    )
}

fn main() {
    let dir = std::env::temp_dir().join(format!("rtbench-latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let template = dir.join("template.json");
    let sample = dir.join("big.sample");
    std::fs::write(&template, TEMPLATE).unwrap();
    std::fs::write(&sample, big_sample(100 * 1024, 0)).unwrap();
    let size = std::fs::metadata(&sample).unwrap().len();

    let inputs = Arc::new(Inputs {
        template: Source::File(template.clone()),
        files: vec![Source::File(sample.clone())],
        folders: Vec::new(),
        corpora: Vec::new(),
    });
    let (tx, rx) = mpsc::channel();
    let worker = Worker::start(
        Arc::clone(&inputs),
        move |r| {
            let _ = tx.send(r);
        },
        |p| panic!("{p}"),
    );
    let mut state = State::new(Theme::dark(), (120, 40));
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();

    let mut round = |variant: usize, state: &mut State| -> (Duration, Duration) {
        // The edit happens first (as an editor saves), then the change is reported.
        std::fs::write(&sample, big_sample(100 * 1024, variant)).unwrap();
        let start = Instant::now();
        worker.request(request_for(state));
        let report = rx.recv().unwrap();
        let took = report.took;
        let got = start.elapsed();
        update::on_report(state, report);
        let updated = start.elapsed();
        terminal.draw(|f| view::draw(f, state)).unwrap();
        if std::env::var_os("LATENCY_PHASES").is_some() {
            eprintln!(
                "report {:.2} ms, update {:.2} ms, draw {:.2} ms",
                got.as_secs_f64() * 1e3,
                (updated - got).as_secs_f64() * 1e3,
                (start.elapsed() - updated).as_secs_f64() * 1e3
            );
        }
        (start.elapsed(), took)
    };
    // Warm up (the highlighter's syntaxes and themes load once).
    for v in 0..3 {
        round(v, &mut state);
    }
    assert!(state.analysis().unwrap().message.is_some());
    let mut total = Vec::new();
    let mut parse = Vec::new();
    for v in 0..60 {
        let (t, p) = round(v + 3, &mut state);
        total.push(t);
        parse.push(p);
    }
    total.sort();
    parse.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median = |v: &[Duration]| v[v.len() / 2];
    println!(
        "edit-to-frame latency, {size}-byte sample, {} runs:",
        total.len()
    );
    println!(
        "  median {:.2} ms   min {:.2} ms   p90 {:.2} ms   max {:.2} ms",
        ms(median(&total)),
        ms(total[0]),
        ms(total[total.len() * 9 / 10]),
        ms(total[total.len() - 1])
    );
    println!(
        "  of which re-read + parse + analysis + highlighting (parse thread): median {:.2} ms",
        ms(median(&parse))
    );
    println!(
        "  target: under 16 ms median: {}",
        if ms(median(&total)) < 16.0 {
            "met"
        } else {
            "NOT met"
        }
    );
    let _ = std::fs::remove_dir_all(&dir);
}
