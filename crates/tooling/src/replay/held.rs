//! Why text is held back after a step: which watched delimiters might start in it.
//!
//! The answer is recomputed on demand with the same partial-match test the parser uses, on the
//! buffer the parser had after the step, so it is exactly the parser's reason for holding.

use pyregex::RegexError;
use rtbench_engine::delimiter::{Delimiter, Scan};

use super::Replay;

/// Which delimiter of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The delimiter that opens the field's region.
    Open,
    /// The delimiter that closes the field's region.
    Close,
}

/// How a watched delimiter relates to the held text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CandidateState {
    /// The text from `start` to the buffer end is the beginning of a possible match.
    Partial,
    /// A complete match starts at `start` but more text could still change it (a pattern at
    /// the buffer edge, or a literal that a longer literal of the same list extends).
    MayGrow,
    /// A complete match (ending at `end`) that must wait because another delimiter is pending
    /// at or before its start.
    Blocked {
        /// Document offset where the complete match ends.
        end: usize,
    },
    /// A complete zero-width close of a region that never opened: the parser stops there and
    /// the text from `start` on is never routed (the reference does the same).
    Stalled {
        /// Document offset where the complete match ends.
        end: usize,
    },
}

/// A delimiter that might start in the held text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The delimiter's field, as an index into the template's fields.
    pub field: usize,
    /// Whether it is the field's open or close delimiter.
    pub role: Role,
    /// The delimiter as the template wrote it (`"<think>"`, `pattern '...'`).
    pub delimiter: String,
    /// Document offset where the match would start.
    pub start: usize,
    /// How the delimiter relates to the held text.
    pub state: CandidateState,
}

impl Replay {
    /// The delimiters that keep the text after `step` held back (empty when nothing is held).
    pub fn held_candidates(&self, step: usize) -> Result<Vec<Candidate>, RegexError> {
        let s = self.step(step);
        if s.held.is_empty() {
            return Ok(Vec::new());
        }
        let mut buffer = self.document[self.origin..s.fed_to].to_string();
        let pos = s.held.start - self.origin;
        let mut out = Vec::new();
        for (field, role, delim) in self.watched(s.current) {
            let candidate = |start: usize, state| Candidate {
                field,
                role,
                delimiter: delim.describe(),
                start: self.origin + start,
                state,
            };
            match delim.scan(&mut buffer, pos, false)? {
                Scan::Pending(start) if start < buffer.len() => {
                    let whole = delim.scan(&mut buffer, start, true)?;
                    let state = match whole {
                        Scan::Complete(m) if m.start == start => CandidateState::MayGrow,
                        _ => CandidateState::Partial,
                    };
                    out.push(candidate(start, state));
                }
                Scan::Complete(m) => {
                    let end = self.origin + m.end;
                    out.push(candidate(m.start, CandidateState::Blocked { end }));
                }
                _ => {}
            }
        }
        // A complete match that no pending delimiter blocks is where the parser stalled.
        let pending = out
            .iter()
            .filter(|c| matches!(c.state, CandidateState::Partial | CandidateState::MayGrow))
            .map(|c| c.start)
            .min();
        for c in &mut out {
            if let CandidateState::Blocked { end } = c.state
                && pending.is_none_or(|p| c.start < p)
            {
                c.state = CandidateState::Stalled { end };
            }
        }
        out.sort_by_key(|c| c.start);
        Ok(out)
    }

    /// The delimiters the parser watches while `current` (the open field, if any) receives text.
    fn watched(&self, current: Option<usize>) -> Vec<(usize, Role, &Delimiter)> {
        let fields = &self.template.fields();
        let implicit = self.template.implicit();
        match current {
            Some(cur) if Some(cur) != implicit => fields[cur]
                .close
                .iter()
                .map(|d| (cur, Role::Close, d))
                .collect(),
            _ => {
                let opens = fields
                    .iter()
                    .enumerate()
                    .filter_map(|(i, f)| f.open.as_ref().map(|d| (i, Role::Open, d)));
                let close =
                    implicit.and_then(|i| fields[i].close.as_ref().map(|d| (i, Role::Close, d)));
                opens.chain(close).collect()
            }
        }
    }
}
