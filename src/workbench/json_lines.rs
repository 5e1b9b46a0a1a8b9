//! A message's JSON written one line at a time from the message itself: the lines of
//! `json.dumps(message, indent=0, ensure_ascii=False)`, each with its depth, as the message pane
//! shows them. The writer can stop after any line and resume there from a few indices (the
//! place of the next entry in each open container), so a pane can draw a window deep in a long
//! message without holding its text or writing the lines before the window.
//!
//! Keys and scalars are written by the engine's JSON writer, so every line is exactly the
//! corresponding line of [`crate::workbench::analysis::json_with_indent`] with `indent` 0.

use rtbench_engine::py::{DumpError, DumpOptions, json_dumps, json_write_str};
use rtbench_engine::{Dict, Value};

/// The options the message pane's JSON is written with (those of
/// [`crate::workbench::analysis::json_with_indent`]): non-ASCII kept, NaN allowed.
const OPTIONS: DumpOptions = DumpOptions {
    ensure_ascii: false,
    allow_nan: true,
    indent: Some(0),
    compact: false,
    surrogates_error: false,
    max_depth: None,
};

/// A value to write: any value, or a message (a dict held outside a [`Value`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Json<'a> {
    Value(&'a Value),
    Dict(&'a Dict),
}

impl<'a> From<&'a Value> for Json<'a> {
    fn from(v: &'a Value) -> Json<'a> {
        Json::Value(v)
    }
}

impl<'a> From<&'a Dict> for Json<'a> {
    fn from(d: &'a Dict) -> Json<'a> {
        Json::Dict(d)
    }
}

/// A list or a dict: a container whose entries are written a line each.
#[derive(Clone, Copy, Debug)]
enum Container<'a> {
    List(&'a [Value]),
    Dict(&'a Dict),
}

impl<'a> Container<'a> {
    fn of(v: &'a Value) -> Option<Container<'a>> {
        match v {
            Value::List(items) => Some(Container::List(items)),
            Value::Dict(d) => Some(Container::Dict(d)),
            _ => None,
        }
    }

    fn len(self) -> usize {
        match self {
            Container::List(items) => items.len(),
            Container::Dict(d) => d.len(),
        }
    }

    /// Entry `i`: its key (a dict's) and its value.
    fn entry(self, i: usize) -> Option<(Option<&'a str>, &'a Value)> {
        match self {
            Container::List(items) => items.get(i).map(|v| (None, v)),
            Container::Dict(d) => d.get_index(i).map(|(k, v)| (Some(k), v)),
        }
    }

    fn brackets(self) -> (char, char) {
        match self {
            Container::List(_) => ('[', ']'),
            Container::Dict(_) => ('{', '}'),
        }
    }
}

#[cfg(test)]
thread_local! {
    /// How many lines this thread's writers wrote.
    static WRITTEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many lines the writers of this thread wrote so far.
#[cfg(test)]
pub(crate) fn lines_written() -> usize {
    WRITTEN.with(std::cell::Cell::get)
}

/// Writes a value's JSON line by line (see the module's documentation).
#[derive(Clone, Debug)]
pub(crate) struct LineWriter<'a> {
    root: Json<'a>,
    /// The open containers, outermost first, each with the index of its next entry.
    stack: Vec<(Container<'a>, usize)>,
    /// Whether the first line is written.
    started: bool,
    /// Strings are passed over, not written (see [`LineWriter::pass_line`]).
    passing: bool,
}

impl<'a> LineWriter<'a> {
    /// A writer at the first line of `root`.
    pub(crate) fn new(root: Json<'a>) -> LineWriter<'a> {
        LineWriter {
            root,
            stack: Vec::new(),
            started: false,
            passing: false,
        }
    }

    /// A writer where [`LineWriter::place`] was `place`, for the same `root`: after the first
    /// line, with the containers open that `place` goes into. Entries missing from `root`
    /// (another value) end the containers early.
    pub(crate) fn resume(root: Json<'a>, place: &[u32]) -> LineWriter<'a> {
        let mut w = LineWriter {
            root,
            stack: Vec::with_capacity(place.len()),
            started: true,
            passing: false,
        };
        let mut open = match root {
            Json::Dict(d) => Some(Container::Dict(d)),
            Json::Value(v) => Container::of(v),
        };
        for &next in place {
            let Some(c) = open else { break };
            let next = usize::try_from(next).unwrap_or(usize::MAX);
            w.stack.push((c, next));
            // The next container is the entry last opened, the one before the next.
            open = next
                .checked_sub(1)
                .and_then(|i| c.entry(i))
                .and_then(|(_, v)| Container::of(v));
        }
        w
    }

    /// Where the writer is: the index of the next entry in each open container, outermost
    /// first (empty before the first line and after the last).
    pub(crate) fn place(&self, out: &mut Vec<u32>) {
        out.extend(
            self.stack
                .iter()
                .map(|&(_, i)| u32::try_from(i).unwrap_or(u32::MAX)),
        );
    }

    /// Writes the next line into `out` (replacing what it held) and returns its depth: how
    /// many containers enclose it (an entry of the outermost container is at depth 1, its
    /// closing bracket at depth 0). `None` after the last line; an error when a scalar cannot
    /// be written (an integer too long).
    pub(crate) fn next_line(&mut self, out: &mut String) -> Result<Option<usize>, DumpError> {
        let depth = self.write_line(out)?;
        #[cfg(test)]
        if depth.is_some() {
            WRITTEN.with(|n| n.set(n.get() + 1));
        }
        Ok(depth)
    }

    /// Moves past the next line as [`LineWriter::next_line`] does, without writing its
    /// strings (`out` is left holding what else the line has): a line that is a string of
    /// megabytes is passed over in no time.
    pub(crate) fn pass_line(&mut self, out: &mut String) -> Result<Option<usize>, DumpError> {
        self.passing = true;
        let depth = self.write_line(out);
        self.passing = false;
        depth
    }

    fn write_line(&mut self, out: &mut String) -> Result<Option<usize>, DumpError> {
        out.clear();
        if !self.started {
            self.started = true;
            match self.root {
                Json::Value(v) => self.value(v, false, out)?,
                Json::Dict(d) => self.container(Container::Dict(d), false, out),
            }
            return Ok(Some(0));
        }
        let depth = self.stack.len();
        let Some((c, next)) = self.stack.last_mut() else {
            return Ok(None);
        };
        let c = *c;
        if let Some((key, v)) = c.entry(*next) {
            *next += 1;
            let more = *next < c.len();
            if let Some(k) = key {
                json_write_str(out, k, OPTIONS.ensure_ascii);
                out.push_str(": ");
            }
            self.value(v, more, out)?;
            return Ok(Some(depth));
        }
        self.stack.pop();
        out.push(c.brackets().1);
        if self.stack.last().is_some_and(|&(p, i)| i < p.len()) {
            out.push(',');
        }
        Ok(Some(depth - 1))
    }

    /// Writes `v` where an entry's value goes: a scalar or an empty container whole, a
    /// container's opening bracket (opening it), then `,` if `more` entries follow it.
    fn value(&mut self, v: &'a Value, more: bool, out: &mut String) -> Result<(), DumpError> {
        match (v, Container::of(v)) {
            (_, Some(c)) => self.container(c, more, out),
            (Value::Str(_), None) if self.passing => {}
            (Value::Str(s), None) => {
                // Room for the string whole, quotes and comma: a long string (a model's
                // answer, megabytes) is written without the doubling growth that would hold
                // one and a half copies of it while it moves.
                out.reserve(s.len() + 3);
                json_write_str(out, s, OPTIONS.ensure_ascii);
                if more {
                    out.push(',');
                }
            }
            (v, None) => {
                out.push_str(&json_dumps(v, &OPTIONS)?);
                if more {
                    out.push(',');
                }
            }
        }
        Ok(())
    }

    fn container(&mut self, c: Container<'a>, more: bool, out: &mut String) {
        let (open, close) = c.brackets();
        out.push(open);
        if c.len() == 0 {
            out.push(close);
            if more {
                out.push(',');
            }
        } else {
            self.stack.push((c, 0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::analysis::json_with_indent;
    use rtbench_engine::py::json_loads;
    use rtbench_engine::value::surrogate_char;

    /// Every line of `root` with its depth.
    fn written(root: Json<'_>) -> Vec<(usize, String)> {
        let mut w = LineWriter::new(root);
        let mut out = Vec::new();
        let mut line = String::new();
        while let Some(depth) = w.next_line(&mut line).expect("writable") {
            out.push((depth, line.clone()));
        }
        out
    }

    /// The lines of `json_with_indent(v, 0)` with their depths, found from the brackets.
    fn dumped(v: &Value) -> Vec<(usize, String)> {
        let mut depth = 0usize;
        json_with_indent(v, 0)
            .split('\n')
            .map(|line| {
                if line.starts_with(['}', ']']) {
                    depth -= 1;
                }
                let here = depth;
                if line.ends_with(['{', '[']) {
                    depth += 1;
                }
                (here, line.to_string())
            })
            .collect()
    }

    #[test]
    fn writes_the_lines_of_the_json_with_their_depths() {
        let v = json_loads(
            r#"{"a": [1, {"b": []}, {}, [[]], "x"], "c": {}, "d": {"e": {"f": null}},
                "g": [1.5e300, -0.0, 1e-05, 123456789012345678901234567890, "\u00e9\n\"\\"]}"#,
        )
        .expect("valid JSON");
        assert_eq!(written(Json::Value(&v)), dumped(&v));
        let Value::Dict(d) = &v else { panic!() };
        assert_eq!(written(Json::Dict(d)), dumped(&v));
        for scalar in ["1", "\"s\"", "[]", "{}", "NaN", "-Infinity"] {
            let v = json_loads(scalar).expect("valid JSON");
            assert_eq!(written(Json::Value(&v)), vec![(0, scalar.to_string())]);
        }
        let lone = Value::List(vec![Value::Str(format!("a{}b", surrogate_char(0xDC00)))]);
        assert_eq!(written(Json::Value(&lone)), dumped(&lone));
        assert_eq!(written(Json::Value(&lone))[1].1, r#""a\udc00b""#);
    }

    #[test]
    fn resumes_after_any_line() {
        let v = json_loads(r#"{"a": [1, {"b": [[], [2]]}, {}], "c": {"d": {}}, "e": [[3]]}"#)
            .expect("valid JSON");
        let all = written(Json::Value(&v));
        let mut w = LineWriter::new(Json::Value(&v));
        let mut line = String::new();
        for i in 0..=all.len() {
            let mut place = Vec::new();
            w.place(&mut place);
            let mut resumed = if i == 0 {
                LineWriter::new(Json::Value(&v))
            } else {
                LineWriter::resume(Json::Value(&v), &place)
            };
            let mut rest = Vec::new();
            while let Some(depth) = resumed.next_line(&mut line).expect("writable") {
                rest.push((depth, line.clone()));
            }
            assert_eq!(rest, all[i..], "after line {i}");
            w.next_line(&mut line).expect("writable");
        }
    }
}
