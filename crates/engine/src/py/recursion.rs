//! Where the reference walks a value with recursive Python functions, and how deep it gets
//! before CPython 3.11 raises `RecursionError`: deep-copying `defaults` when a template loads,
//! applying a `transform` when a region closes (`_apply_transform`), walking a region's value
//! for tool calls (`_coerce_tool_calls`) and, for token ids (5.25), for markers
//! (`strip_markers`).
//!
//! CPython counts Python frames against a limit of 1000, so the deepest value that works
//! depends on how many frames each level costs (a recursive call and its comprehension: two
//! per list or dict) and on how deep the stack already is, which differs between the
//! reference's entry points (its command line's one-shot `parse` and its `stream`, a region
//! closed while the prefix is read or later). The frame budgets and messages below were
//! measured on the reference's command line under transformers 5.24 and 5.25 (the same for
//! both) by `tools/semantics/measure_recursion.py`, whose runs at and past every limit
//! `tests/it/recursion_cli.rs` replays; the budgets are the largest consistent with them.

use crate::value::Value;

/// The entry point a region closes under, told apart by how deep `json.loads` may nest there
/// (see [`super::JSON_MAX_DEPTH_PARSE`]): the stack below the region differs between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// One-shot `parse_response`, a region closed during the feed or at the end.
    Parse,
    /// `ResponseParser.feed` / `finalize` called directly (the `stream` command, the library).
    Stream,
    /// `parse_response`, a region closed while the prefix is read.
    ParsePrefix,
    /// `ResponseParser(...)`, a region closed while the prefix is read.
    StreamPrefix,
}

impl Path {
    /// The path whose content parser may nest JSON `json_depth` deep.
    pub(crate) fn of_json_depth(json_depth: usize) -> Path {
        use super::json_decode::{JSON_MAX_DEPTH_PARSE, JSON_MAX_DEPTH_STREAM};
        const PREFIX_FRAMES: usize = 2;
        match json_depth {
            d if d == JSON_MAX_DEPTH_PARSE => Path::Parse,
            d if d + PREFIX_FRAMES == JSON_MAX_DEPTH_PARSE => Path::ParsePrefix,
            d if d + PREFIX_FRAMES == JSON_MAX_DEPTH_STREAM => Path::StreamPrefix,
            _ => Path::Stream,
        }
    }
}

/// How many frames a recursive walk may use on a path, and the message CPython gives when it
/// runs out there (where the limit is hit, inside a call from C or not, changes the words).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    pub frames: usize,
    pub message: &'static str,
}

const CALLING: &str = "maximum recursion depth exceeded while calling a Python object";
const PLAIN: &str = "maximum recursion depth exceeded";

/// `_apply_transform`: one frame for the call, one more for a list's or dict's comprehension.
pub(crate) fn transform_budget(path: Path) -> Budget {
    match path {
        Path::Parse => Budget {
            frames: 992,
            message: CALLING,
        },
        Path::Stream => Budget {
            frames: 994,
            message: PLAIN,
        },
        Path::ParsePrefix | Path::StreamPrefix => Budget {
            frames: 992,
            message: PLAIN,
        },
    }
}

/// `_coerce_tool_calls` over a value's lists (one frame for the call, one for each list's
/// comprehension, one for `_schema_types` on a tool call it casts).
pub(crate) fn coerce_budget(path: Path) -> Budget {
    let frames = match path {
        Path::Parse | Path::StreamPrefix => 993,
        Path::Stream => 995,
        Path::ParsePrefix => 991,
    };
    Budget {
        frames,
        message: CALLING,
    }
}

/// 5.25's `strip_markers` over a region's value when parsing token ids (one frame for the call,
/// one for a list's or dict's comprehension), measured by `tools/semantics/measure_token_ids.py`
/// from the stack of a command-line script (the reference's command line has no token-id mode).
pub(crate) fn strip_markers_budget(path: Path) -> Budget {
    let frames = match path {
        Path::Parse => 994,
        Path::Stream => 995,
        Path::ParsePrefix => 992,
        Path::StreamPrefix => 993,
    };
    Budget {
        frames,
        message: PLAIN,
    }
}

/// Frames a walk taking one frame per call and one more per container (its comprehension)
/// uses on `v`: a scalar 1, a list or dict 2 plus its deepest item's (a dict's keys count as
/// scalars).
pub(crate) fn walk_frames(v: &Value) -> usize {
    // Iterative, as `deepcopy_frames`.
    let mut deepest = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, used)) = stack.pop() {
        match v {
            Value::List(items) => {
                deepest = deepest.max(used + 2);
                stack.extend(items.iter().map(|i| (i, used + 2)));
            }
            Value::Dict(d) => {
                deepest = deepest.max(used + 2 + usize::from(!d.is_empty()));
                stack.extend(d.values().map(|i| (i, used + 2)));
            }
            _ => deepest = deepest.max(used + 1),
        }
    }
    deepest
}

/// `copy.deepcopy` of the template's `defaults` when it loads (two frames per value: `deepcopy`
/// and its per-type copier), within the one-shot `parse` or the `stream` entry point.
pub(crate) const DEFAULTS_BUDGET: Budget = Budget {
    frames: 995,
    message: CALLING,
};

/// Frames `copy.deepcopy` uses on `v`: two for every value on the deepest path.
pub(crate) fn deepcopy_frames(v: &Value) -> usize {
    // Iterative: a value nested too deep for the reference must not overflow rtbench's stack.
    let mut deepest = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, level)) = stack.pop() {
        deepest = deepest.max(level);
        match v {
            Value::List(items) => stack.extend(items.iter().map(|i| (i, level + 1))),
            Value::Dict(d) => stack.extend(d.values().map(|i| (i, level + 1))),
            _ => {}
        }
    }
    2 * deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::py::json_loads;

    #[test]
    fn frames_count_every_level_twice() {
        assert_eq!(deepcopy_frames(&json_loads("1").unwrap()), 2);
        assert_eq!(deepcopy_frames(&json_loads("{\"d\": [[1]]}").unwrap()), 8);
        assert_eq!(
            deepcopy_frames(&json_loads("{\"d\": [[]], \"e\": 1}").unwrap()),
            6
        );
    }

    #[test]
    fn walks_count_a_call_and_a_comprehension_per_level() {
        assert_eq!(walk_frames(&json_loads("1").unwrap()), 1);
        assert_eq!(walk_frames(&json_loads("[]").unwrap()), 2);
        assert_eq!(walk_frames(&json_loads("[[[]]]").unwrap()), 6);
        assert_eq!(walk_frames(&json_loads("[[1]]").unwrap()), 5);
        assert_eq!(walk_frames(&json_loads("{\"a\": []}").unwrap()), 4);
        assert_eq!(walk_frames(&json_loads("{\"a\": 1}").unwrap()), 3);
    }

    #[test]
    fn paths_follow_the_json_depth() {
        use super::super::json_decode::{JSON_MAX_DEPTH_PARSE, JSON_MAX_DEPTH_STREAM};
        assert_eq!(Path::of_json_depth(JSON_MAX_DEPTH_PARSE), Path::Parse);
        assert_eq!(Path::of_json_depth(JSON_MAX_DEPTH_STREAM), Path::Stream);
        assert_eq!(
            Path::of_json_depth(JSON_MAX_DEPTH_PARSE - 2),
            Path::ParsePrefix
        );
        assert_eq!(
            Path::of_json_depth(JSON_MAX_DEPTH_STREAM - 2),
            Path::StreamPrefix
        );
    }
}
