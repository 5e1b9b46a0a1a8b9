//! Hostile chat templates: each is generated here, and each must end in a clear error that names
//! the template file and the line (when there is one) and says what to do, never a crash, a
//! runaway allocation or a rendering without end. What the reference renders at ordinary
//! sizes of the same constructs is in the reference cases (tools/chat/cases.py, `hostile/...`).

use rtbench_chat::{ChatTemplate, RenderError, RenderErrorKind, RenderInput};

const FILE: &str = "models/hostile/chat_template.jinja";

fn render(source: &str) -> Result<String, RenderError> {
    let messages = serde_json::json!([{"role": "user", "content": "hi"}]);
    let kwargs = serde_json::Map::new();
    let input = RenderInput {
        messages: &messages,
        tools: None,
        add_generation_prompt: false,
        kwargs: &kwargs,
    };
    ChatTemplate::new(source, FILE)?.render(&input)
}

/// Runs `f` on a thread with a small stack (as small as any caller's), so that a template
/// whose compilation or rendering recursed deeply would overflow it.
fn on_small_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn_scoped(s, f)
            .expect("spawn")
            .join()
            .expect("no crash")
    })
}

fn limit_error(source: &str) -> RenderError {
    let err = on_small_stack(|| render(source)).expect_err("a limit stops this template");
    assert_eq!(err.kind, RenderErrorKind::Limit, "{err}");
    assert!(err.to_string().starts_with(FILE), "names the file: {err}");
    err
}

#[test]
fn deep_chains_are_refused_before_parsing() {
    let n = 20_000;
    let cases = [
        (
            "a sum",
            format!("x\n{{{{ {} }}}}", vec!["1"; n].join(" + ")),
        ),
        (
            "chained filters",
            format!("x\n{{{{ 'a'{} }}}}", "|lower".repeat(n)),
        ),
        ("not", format!("x\n{{{{ {}1 }}}}", "not ".repeat(n))),
        (
            "attributes",
            format!("x\n{{{{ messages{} }}}}", ".a".repeat(n)),
        ),
        ("negations", format!("x\n{{{{ {}1 }}}}", "- ".repeat(n))),
        (
            "elif",
            format!("x\n{{% if a %}}{}{{% endif %}}", "{% elif b %}".repeat(n)),
        ),
    ];
    for (name, source) in cases {
        let err = limit_error(&source);
        assert_eq!(err.line, Some(2), "{name}: the line of the tag: {err}");
        assert!(
            err.message.contains("levels deep") && err.message.contains("{% set %}"),
            "{name}: says what and what to do: {err}"
        );
    }
}

#[test]
fn nesting_up_to_the_limit_compiles_on_any_thread() {
    // 900 levels: more than the reference accepts, less than rtbench's limit.
    let source = format!("{{{{ {} }}}}", vec!["1"; 900].join(" + "));
    assert_eq!(on_small_stack(|| render(&source)).unwrap(), "900");
}

#[test]
fn an_engine_panic_is_an_error_naming_the_file() {
    // `loop.cycle()` without items divides by zero inside the engine; the reference raises a
    // TypeError at that line (the reference case hostile/loop-cycle-without-items).
    let err = on_small_stack(|| render("{% for m in messages %}\n{{ loop.cycle() }}{% endfor %}"))
        .expect_err("fails, as in the reference");
    assert_eq!(err.kind, RenderErrorKind::Other);
    assert_eq!(err.line, Some(2), "{err}");
    assert!(err.to_string().starts_with(FILE), "{err}");
    assert!(err.message.contains("no items for cycling"), "{err}");
    // The same call with its items spread from an empty list: not found in the source, so
    // the error says the engine failed, without a place.
    let err = on_small_stack(|| render("{% for m in messages %}{{ loop.cycle(*[]) }}{% endfor %}"))
        .expect_err("fails, as in the reference");
    assert_eq!(err.kind, RenderErrorKind::Other);
    assert!(err.to_string().starts_with(FILE), "{err}");
    assert!(err.message.contains("minijinja"), "{err}");
}

#[test]
fn arguments_that_would_exhaust_memory_are_refused() {
    let cases = [
        "{{ 'a' | center(10**10) }}",
        "{{ messages | tojson(indent=10**9) }}",
        "{{ [[[1]]] | tojson(indent=10**7) }}",
        "{{ '%10000000000d' | format(1) }}",
        "{{ '%.10000000000f' | format(1.5) }}",
        "{{ '{:>10000000000}'.format(1) }}",
        "{{ messages | batch(10**12, 'x') | list }}",
        "{{ messages | slice(10**9) | list }}",
        "{{ 'a\nb\nc' | indent(10**10) }}",
    ];
    for source in cases {
        let err = limit_error(source);
        assert!(
            err.message.contains("use a smaller value"),
            "{source}: says what to do: {err}"
        );
    }
}

#[test]
fn a_huge_count_without_a_filler_batches_like_the_reference() {
    // jinja2 builds batches as it goes, so the count only has to be larger than the list.
    let out = on_small_stack(|| render("{{ messages | batch(10**12) | list | length }}"));
    assert_eq!(out.unwrap(), "1");
}

#[test]
fn values_nested_without_bound_are_refused_when_printed() {
    // Python's repr and json.dumps stop at about a thousand levels (RecursionError). Built
    // deeper still, such a value overflows the Jinja engine's own recursive drop: the thread
    // here has a command's stack (8 MiB) for that.
    let source = "{% set ns = namespace(x=[]) %}{% for i in range(1500) %}\
                  {% set ns.x = [ns.x] %}{% endfor %}";
    for print in ["{{ ns.x }}", "{{ ns.x | tojson }}"] {
        let err = std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(8 << 20)
                .spawn_scoped(s, || render(&format!("{source}{print}")))
                .expect("spawn")
                .join()
                .expect("no crash")
        })
        .expect_err("too deep to print");
        assert_eq!(err.kind, RenderErrorKind::Limit, "{err}");
        assert!(err.message.contains("levels deep"), "{err}");
    }
}

#[test]
fn output_is_bounded() {
    // Each line repeats 20 MB of text; the rendering stops at the budget (64 MiB here).
    let err =
        limit_error("{% set s = 'x' * 20000000 %}{% for i in range(10) %}{{ s }}{% endfor %}");
    assert!(err.message.contains("grew past"), "{err}");
}

#[test]
fn endless_loops_run_out_of_steps() {
    let err = limit_error(
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    );
    assert!(err.message.contains("steps"), "{err}");
}
