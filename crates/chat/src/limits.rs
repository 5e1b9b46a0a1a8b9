//! The resource limits a chat template renders under: a chat template is code from a model
//! folder, and no template may crash rtbench, run without end or take memory out of
//! proportion to its inputs.
//!
//! - **Nesting**: a template nested deeper than [`MAX_NESTING`] levels (see [`crate::nesting`])
//!   is refused before the Jinja engine parses it; one nested more than a few levels is
//!   compiled on a helper thread with room for the deepest accepted.
//! - **Steps**: minijinja's fuel, 4 million instructions plus 64 per byte of the inputs.
//! - **Recursion**: minijinja's own limit on macro and recursive-loop calls (its default, 500).
//! - **Output and allocations**: the rendered text may hold [`Budget::output`] bytes, 64 MiB
//!   plus 16 times the size of the inputs; a filter or function whose result grows with an
//!   argument (`center`, `indent`, `format` widths, `tojson` indents, `batch`, `slice`) is
//!   refused an argument that would make it larger, before it allocates.
//! - **Panics**: a panic inside the engine becomes an error naming the template.
//!
//! Under these limits every template the reference renders in reasonable time and memory
//! renders the same; the reference itself fails on nesting beyond a few hundred levels
//! (`RecursionError`), and runs out of memory where the allocation limits stop rtbench.

use std::cell::Cell;

use minijinja::{Error, ErrorKind};

/// The deepest nesting accepted (levels of the syntax tree, see [`crate::nesting`]). The
/// reference fails beyond about 500 (Python's recursion limit: 491 terms of `+`, 327 chained
/// filters, 69 nested parentheses), so nothing it renders is refused.
pub(crate) const MAX_NESTING: usize = 1000;

/// Nesting up to which compiling on the caller's thread is safe on any thread's stack.
pub(crate) const SHALLOW: usize = 64;

/// Stack for the helper thread that compiles a deeply nested template: ample for
/// [`MAX_NESTING`] levels in an unoptimised build.
pub(crate) const HELPER_STACK: usize = 256 << 20;

/// Instructions every rendering may run (minijinja's fuel), whatever its inputs.
const FUEL_BASE: u64 = 4_000_000;

/// Instructions allowed per byte of input. The bundled chat templates run 50 to 80
/// instructions per message (under one per byte of input); this leaves room for templates
/// many times heavier, and stops a runaway loop within a second or two (release build).
const FUEL_PER_INPUT_BYTE: u64 = 64;

/// The output every rendering may hold whatever its inputs.
const OUTPUT_BASE: usize = 64 << 20;

/// The output allowed per byte of input (messages, tools and keyword arguments as JSON).
const OUTPUT_PER_INPUT_BYTE: usize = 16;

/// The limits of one rendering; the allocation limits are in force on the thread that
/// renders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Bytes of rendered text; also the largest string a filter may build.
    pub output: usize,
    /// Instructions the rendering may run.
    pub fuel: u64,
}

impl Budget {
    /// The budget of a rendering whose inputs are `input_bytes` long (as compact JSON).
    pub(crate) fn for_input(input_bytes: usize) -> Budget {
        Budget {
            output: OUTPUT_BASE.saturating_add(input_bytes.saturating_mul(OUTPUT_PER_INPUT_BYTE)),
            fuel: FUEL_BASE
                .saturating_add((input_bytes as u64).saturating_mul(FUEL_PER_INPUT_BYTE)),
        }
    }

    /// The most items a filter may put in the lists it builds (a list item costs a few dozen
    /// bytes).
    pub(crate) fn items(&self) -> usize {
        self.output / 64
    }
}

thread_local! {
    static BUDGET: Cell<Budget> = const {
        Cell::new(Budget {
            output: OUTPUT_BASE,
            fuel: FUEL_BASE,
        })
    };
}

/// The budget of the rendering on this thread.
pub(crate) fn budget() -> Budget {
    BUDGET.with(Cell::get)
}

/// Runs `f` with `budget` in force on this thread.
pub(crate) fn with_budget<T>(budget: Budget, f: impl FnOnce() -> T) -> T {
    let previous = BUDGET.with(|b| b.replace(budget));
    let out = f();
    BUDGET.with(|b| b.set(previous));
    out
}

/// The marker a limit's error carries in its source chain, so that it is reported as a limit.
#[derive(Debug)]
pub(crate) struct LimitReached;

impl std::fmt::Display for LimitReached {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a resource limit was reached")
    }
}

impl std::error::Error for LimitReached {}

/// An error for a limit reached, with its message.
pub(crate) fn limit_error(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, message).with_source(LimitReached)
}

/// The error of a filter or function refused an argument that would make its result larger
/// than the budget allows.
pub(crate) fn too_large(what: &str, value: impl std::fmt::Display, limit: usize) -> Error {
    limit_error(format!(
        "{what} of {value} would build more than {limit} {unit}, the most rtbench allows in \
             one rendering (64 MiB plus 16 times the size of the inputs): use a smaller value",
        unit = if what.contains("count") {
            "items"
        } else {
            "characters"
        },
    ))
}

/// Checks a width, indent or padding that makes a string of about `n` characters.
pub(crate) fn check_width(what: &str, n: usize) -> Result<(), Error> {
    let limit = budget().output;
    if n > limit {
        return Err(too_large(what, n, limit));
    }
    Ok(())
}

/// Checks a count of items a filter is about to build.
pub(crate) fn check_items(what: &str, n: usize) -> Result<(), Error> {
    let limit = budget().items();
    if n > limit {
        return Err(too_large(what, n, limit));
    }
    Ok(())
}

/// How a format string marks its conversions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FormatStyle {
    /// printf-style, `%10.3f` (the `format` filter).
    Printf,
    /// `str.format`'s `{:>10}`.
    Braces,
}

/// Checks the widths and precisions of a format string against the budget: each makes a
/// string of about that many characters. Every run of digits in a conversion counts (an index
/// like `{0}` is small).
pub(crate) fn check_format_widths(format: &str, style: FormatStyle) -> Result<(), Error> {
    let limit = budget().output;
    let bytes = format.as_bytes();
    let open = match style {
        FormatStyle::Printf => b'%',
        FormatStyle::Braces => b'{',
    };
    // Whether a byte can still be part of the conversion after its opening.
    let inside = |b: u8| match style {
        FormatStyle::Printf => b.is_ascii_digit() || b"#0- +.*hlL".contains(&b),
        FormatStyle::Braces => b != b'}',
    };
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != open {
            i += 1;
            continue;
        }
        i += 1;
        if bytes.get(i) == Some(&open) {
            i += 1;
            continue;
        }
        if style == FormatStyle::Printf && bytes.get(i) == Some(&b'(') {
            while i < bytes.len() && bytes[i] != b')' {
                i += 1;
            }
            i += 1;
        }
        let mut number: usize = 0;
        while i < bytes.len() && inside(bytes[i]) {
            if bytes[i].is_ascii_digit() {
                number = number
                    .saturating_mul(10)
                    .saturating_add(usize::from(bytes[i] - b'0'));
                if number > limit {
                    return Err(too_large("a format width or precision", number, limit));
                }
            } else {
                number = 0;
            }
            i += 1;
        }
    }
    Ok(())
}

/// The size of a JSON value written compactly (an estimate within a few bytes per item).
pub(crate) fn json_size(v: &serde_json::Value) -> usize {
    use serde_json::Value as J;
    match v {
        J::Null | J::Bool(_) | J::Number(_) => 8,
        J::String(s) => s.len() + 2,
        J::Array(items) => 2 + items.iter().map(|i| json_size(i) + 1).sum::<usize>(),
        J::Object(map) => {
            2 + map
                .iter()
                .map(|(k, i)| k.len() + 4 + json_size(i))
                .sum::<usize>()
        }
    }
}

/// Where the rendering writes: a buffer that refuses to grow past the output budget.
pub(crate) struct LimitedOutput {
    pub text: Vec<u8>,
    pub limit: usize,
    pub exceeded: bool,
}

impl std::io::Write for LimitedOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.text.len().saturating_add(buf.len()) > self.limit {
            self.exceeded = true;
            return Err(std::io::Error::other("output limit"));
        }
        self.text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub(crate) use rtbench_engine::quiet_panic::catch_panic;

/// Runs `f` on a helper thread with a stack of [`HELPER_STACK`] when `depth` needs more room
/// than any thread is sure to have; on the caller's thread otherwise. `None` when the helper
/// thread cannot be started.
pub(crate) fn with_room<T: Send>(depth: usize, f: impl FnOnce() -> T + Send) -> Option<T> {
    if depth <= SHALLOW {
        return Some(f());
    }
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("rtbench-chat-compile".into())
            .stack_size(HELPER_STACK)
            .spawn_scoped(scope, f)
            .ok()?;
        worker.join().ok()
    })
}
