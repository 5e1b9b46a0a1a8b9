//! Reads `pattern<TAB>text[<TAB>pos]` lines (pattern and text hex-encoded UTF-8, `pos` a
//! code-point offset, 0 when absent; patterns compiled with DOTALL) and prints, for each, the
//! partial search from `pos` (`C start end`, `P start` or `E error`) and the plain search
//! (`start end`, `None` or `E error`), in code points. `tools/regex/probe_compare.py` feeds it
//! every prefix of a text and compares each line with the reference:
//!
//! ```text
//! cargo build --release -p pyregex --example probe
//! /tmp/oracle525/bin/python tools/regex/probe_compare.py '(?fi)(?:first){2}' 'fıRSTfIr'
//! ```
use std::io::BufRead;

fn cp(s: &str, b: usize) -> usize {
    s[..b].chars().count()
}

fn main() {
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let mut parts = line.split('\t');
        let p = unhex(parts.next().unwrap());
        let h = unhex(parts.next().unwrap());
        let pos: usize = parts.next().map_or(0, |s| s.parse().unwrap());
        let pos = h.char_indices().nth(pos).map_or(h.len(), |(b, _)| b);
        match pyregex::Regex::new(&p, pyregex::Flags { dotall: true }) {
            Err(e) => println!("ERR {e}"),
            Ok(re) => {
                let part = match re.search_partial(&h, pos) {
                    Ok(pyregex::Partial::Complete(m)) => {
                        format!("C {} {}", cp(&h, m.start()), cp(&h, m.end()))
                    }
                    Ok(pyregex::Partial::Partial { start }) => format!("P {}", cp(&h, start)),
                    Err(e) => format!("E {e}"),
                };
                let s = match re.search(&h, pos) {
                    Ok(Some(m)) => format!("{} {}", cp(&h, m.start()), cp(&h, m.end())),
                    Ok(None) => "None".into(),
                    Err(e) => format!("E {e}"),
                };
                println!("{part} | {s}");
            }
        }
    }
}

fn unhex(s: &str) -> String {
    let bytes: Vec<u8> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect();
    String::from_utf8(bytes).unwrap()
}
