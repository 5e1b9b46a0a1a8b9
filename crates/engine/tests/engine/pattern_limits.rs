//! Template patterns at the reference's limits: nesting it cannot load is a template error
//! pointing into the file; error positions count code points as the reference's do.

use rtbench_engine::template::LoadError;
use rtbench_engine::{Template, parse_response};

fn template(open_pattern: &str) -> String {
    let pattern = serde_json_string(open_pattern);
    format!(
        "{{\n  \"version\": 1,\n  \"start_anchor\": \"<s>\",\n  \"fields\": {{\n    \"content\": {{\n      \"open_pattern\": {pattern},\n      \"close\": \"</c>\"\n    }}\n  }}\n}}\n"
    )
}

fn serde_json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn nested(open: &str, n: usize) -> String {
    format!("{}a{}", open.repeat(n), ")".repeat(n))
}

#[test]
fn nesting_beyond_the_reference_is_a_template_error_with_a_location() {
    // Accepted one level below where transformers' template loading raises RecursionError.
    for (open, max) in [("(", 327), ("(?:", 196), ("(?i:", 196), ("(?:a|", 196)] {
        let ok = Template::from_json_str(&template(&nested(open, max)));
        assert!(
            ok.is_ok(),
            "{open} x {max}: {:?}",
            ok.err().map(|e| e.to_string())
        );
        let err = Template::from_json_str(&template(&nested(open, max + 1))).unwrap_err();
        let LoadError::Invalid(d) = err else {
            panic!("{open}: not a template error")
        };
        assert!(d.message.starts_with("RecursionError: "), "{}", d.message);
        let at = d.location.expect("the error points into the template");
        assert_eq!(at.line, 6, "{open}");
        assert!(at.column > 23, "{open}: column {}", at.column);
    }
    // Thousands of levels: the same error, no stack overflow.
    let err = Template::from_json_str(&template(&nested("(", 8000))).unwrap_err();
    assert!(err.to_string().contains("RecursionError: "), "{err}");
}

#[test]
fn deepest_accepted_template_parses_on_a_2_mib_thread() {
    let worker = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            for (open, max) in [("(", 327), ("(?:", 196), ("(?=", 245), ("(?:a|", 196)] {
                let t = Template::from_json_str(&template(&nested(open, max))).unwrap();
                let text = format!("xx{}a</c>", "a".repeat(50));
                parse_response(&t, Some("<s>"), &text, None).unwrap();
            }
        })
        .unwrap();
    worker.join().expect("no stack overflow");
}

#[test]
fn regex_error_positions_count_code_points() {
    let err = Template::from_json_str(&template("😀[")).unwrap_err();
    // The reference: "unterminated character set at position 2".
    assert!(
        err.to_string().contains("at position 2"),
        "{}",
        err.to_string()
    );
}
