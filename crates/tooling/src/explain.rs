//! Explanations of a mis-parse: why a field matched nowhere, or why its region ended where it
//! did. Built from the parser's own trace (the engine's regions, [`rtbench_engine::region`])
//! and from searches of the field's delimiters over the parsed text, so that what it says is
//! what the parser did.
//!
//! For a pattern delimiter it lists every place the pattern matched (span, text, named groups,
//! the top-level alternative taken) and why a match did not open the field; when the pattern
//! matched nowhere it shows the longest partial match and, under the pattern source, the
//! element that could not match next. Places are named as [`crate::place`] names them:
//! `file:line:col` of the file the text lives in (see [`Explanation::places`]) and the
//! generation's or prefix's own `line:col` (`x.sample:23:27 (generation 6:20)`), or the latter
//! alone for text in no file.

use std::ops::Range;

use pyregex::RegexError;
use rtbench_engine::audit::{Audit, audit_decoded};
use rtbench_engine::delimiter::{Delimiter, PatternDelimiter};
use rtbench_engine::parser::{MARKER, ParseError};
use rtbench_engine::region::Regions;
pub use rtbench_engine::region::{Ending, Region};
use rtbench_engine::template::{Field, Template};
use rtbench_engine::value::Value;

use crate::place::{Part, Places};

/// What an explanation includes beyond the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Also report the field's open delimiter in the prefix before the start anchor's cut
    /// (text the parser never sees).
    pub prefix_details: bool,
}

/// Delimiter patterns are compiled with DOTALL, as the reference does.
const DELIMITER_FLAGS: pyregex::Flags = pyregex::Flags { dotall: true };

/// How many findings of one kind are listed before "and N more".
const LISTED: usize = 3;

/// One place where the field's open delimiter matched but did not open the field.
#[derive(Clone, Debug, PartialEq)]
pub struct MissedOpen {
    /// Where the open delimiter matched, in bytes of the document.
    pub at: Range<usize>,
    /// Why the match did not open the field.
    pub reason: Missed,
}

/// Why a match of a field's open delimiter did not open the field.
#[derive(Clone, Debug, PartialEq)]
pub enum Missed {
    /// The text lay inside another explicit region, where only that region's close is watched.
    InsideRegion(String),
    /// Another delimiter was committed at or over this text first, by `rule`.
    Beaten {
        /// The field whose delimiter won.
        by: String,
        /// Where the winning delimiter matched, in bytes of the document.
        at: Range<usize>,
        /// The tie-breaking rule that made it win.
        rule: Rule,
    },
    /// The text was in the prefix before the start anchor's cut (only with
    /// [`Options::prefix_details`]).
    BeforeAnchor,
}

/// Which of the parser's tie-breaking rules made another delimiter win.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// It started earlier.
    EarliestStart,
    /// It started at the same place and was longer.
    Longest,
    /// Same place and length: an open beats the implicit field's close.
    OpensBeforeCloses,
    /// Same place and length, both opens: the field name that sorts first wins.
    Alphabetical,
    /// It was committed while this match was not yet committable (held back at the end of
    /// the text the parser had, or overlapping a delimiter already taken).
    CommittedFirst,
}

impl Rule {
    fn says(self) -> &'static str {
        match self {
            Rule::EarliestStart => "the earliest start wins",
            Rule::Longest => "same start: the longest match wins",
            Rule::OpensBeforeCloses => "same start and length: opens win over closes",
            Rule::Alphabetical => {
                "same start and length: the field name first in alphabetical order wins"
            }
            Rule::CommittedFirst => "it was committed first",
        }
    }
}

/// One complete match of a pattern open delimiter in the parsed text.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternMatch {
    /// Where the match is, in bytes of the document.
    pub at: Range<usize>,
    /// The named groups in pattern order (`None`: the group did not take part).
    pub groups: Vec<(String, Option<String>)>,
    /// The top-level alternative the match took (index, source), when the pattern has several.
    pub alternative: Option<(usize, String)>,
    /// Whether this match opened a region of the field.
    pub opened: bool,
}

/// Where a pattern delimiter's best partial match stopped: the element of the pattern source
/// that could not match next.
#[derive(Clone, Debug, PartialEq)]
pub struct StuckElement {
    /// Byte range of the element in the pattern source.
    pub element: Range<usize>,
    /// Document offset where the element was tried.
    pub at: usize,
}

/// How the prefix was cut by the start anchor.
#[derive(Clone, Debug, PartialEq)]
pub enum AnchorCut {
    /// No prefix was given (empty): nothing the prompt pre-wrote is known.
    EmptyPrefix,
    /// The anchor was not found: the whole prefix was parsed.
    NotFound {
        /// The prefix's length in bytes.
        prefix_len: usize,
    },
    /// The prefix was cut after the last anchor match.
    Cut {
        /// The byte offset of the cut (the end of the last anchor match).
        at: usize,
        /// The part of the prefix that was parsed, in bytes.
        kept: Range<usize>,
    },
}

/// Everything the explanation knows about one field.
#[derive(Clone, Debug)]
pub struct Explanation {
    /// The name of the field explained.
    pub field: String,
    /// Every field name of the template, in template order ([`Ending::Open`] indexes it).
    pub field_names: Vec<String>,
    /// The field's open delimiter as described to the user; `None` when it has none.
    pub open: Option<String>,
    /// The field's close delimiter as described to the user; `None` when it has none.
    pub close: Option<String>,
    /// The open pattern's source, for a pattern open.
    pub open_pattern: Option<String>,
    /// The close pattern's source, for a pattern close.
    pub close_pattern: Option<String>,
    /// The top-level alternatives of the open pattern (source text), when it has several.
    pub open_alternatives: Vec<String>,
    /// Whether the field may have several regions (`repeats` in the template).
    pub repeats: bool,
    /// The field's regions (the engine's model), closed, failed, or open when parsing stopped.
    pub regions: Vec<Region>,
    /// Every complete match of a pattern open in the parsed text.
    pub pattern_matches: Vec<PatternMatch>,
    /// The places where the open delimiter matched but did not open the field.
    pub missed_opens: Vec<MissedOpen>,
    /// When the open delimiter never matched anywhere: the closest the text came.
    pub nearest_open: Option<Range<usize>>,
    /// For a pattern open that matched nowhere: where its closest match got stuck.
    pub open_stuck: Option<StuckElement>,
    /// For regions that ran to the end of the stream: the closest the text came to the close.
    pub nearest_close: Option<Range<usize>>,
    /// For a pattern close near-miss: where it got stuck.
    pub close_stuck: Option<StuckElement>,
    /// Places where the field's close delimiter appears while none of its regions was open
    /// (a region the prompt opened but the parser never saw, or text taken by another region).
    pub stray_closes: Vec<Range<usize>>,
    /// How the start anchor cut the prefix.
    pub anchor: AnchorCut,
    /// The parse's error, when it failed.
    pub parse_error: Option<ParseError>,
    /// The document the ranges refer to (prefix + generation).
    pub document: String,
    /// Length of the prefix in the document (bytes).
    pub prefix_len: usize,
    /// What the reference version in force did where versions differ (one line each).
    pub version_notes: Vec<String>,
    /// The options the explanation was made with.
    pub options: Options,
    /// The files the prefix and generation live in, for naming places (none by default:
    /// places are then the texts' own `generation L:C`, `prefix L:C`).
    pub places: Places,
}

/// What one traced parse gives every field's explanation.
struct Traced {
    /// The tool schemas the parse cast arguments with.
    tools: Option<Value>,
    document: String,
    prefix_len: usize,
    origin: usize,
    /// The regions, a repeating field's values held in `message` only (see
    /// [`Region::value_in`]): an explanation copies the values of its own field's regions.
    regions: Regions,
    /// The message, when the parse succeeded.
    message: Option<rtbench_engine::value::Dict>,
    parse_error: Option<ParseError>,
    anchor: AnchorCut,
}

impl Traced {
    /// Region `g` with its value held in it (copied from the message when held there).
    fn whole(&self, template: &Template, mut g: Region) -> Region {
        if g.value_item.is_some() {
            let name = template.fields()[g.field].name.as_str();
            g.set_value(g.value_in(self.message.as_ref(), name).cloned());
            g.value_item = None;
        }
        g
    }
}

/// Explains `field` for one generation, with the default [`Options`].
pub fn explain(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
    field: &str,
) -> Result<Explanation, String> {
    explain_with(
        template,
        prefix,
        generation,
        tools,
        field,
        Options::default(),
    )
}

/// Explains `field` for one generation.
pub fn explain_with(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
    field: &str,
    options: Options,
) -> Result<Explanation, String> {
    let index = template.field_index(field).ok_or_else(|| {
        let names: Vec<&str> = template.fields().iter().map(|f| f.name.as_str()).collect();
        format!(
            "no field '{field}' in the template (fields: {})",
            names.join(", ")
        )
    })?;
    within_budget(generation, || {
        let t = traced(template, &Decoded::text(prefix, generation), tools)?;
        explain_field(template, &t, index, options).map_err(|e| name_budget(e, template, index))
    })
}

/// Explains every field of the template, in template order, from one parse.
pub fn explain_all(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
    options: Options,
) -> Result<Vec<Explanation>, String> {
    let decoded = Decoded::text(prefix, generation);
    explain_decoded(template, &decoded, tools, None, options)
}

/// The text an explanation reads, as the parser received it: the prompt, the generation fed,
/// and (for token ids) what the decoder released when flushed at the end.
#[derive(Clone, Copy, Debug)]
pub struct Decoded<'a> {
    /// The prompt text.
    pub prefix: &'a str,
    /// The generation's text as fed to the parser.
    pub fed: &'a str,
    /// What the decoder released when flushed after the last id (empty for text).
    pub tail: &'a str,
    /// The text is 5.25's decoding of token ids: defused control-token spellings carry
    /// markers, which positions do not count and quotes show as defused.
    pub defused: bool,
}

impl<'a> Decoded<'a> {
    /// Plain text: a prompt and a generation.
    pub fn text(prefix: &'a str, generation: &'a str) -> Decoded<'a> {
        Decoded {
            prefix,
            fed: generation,
            tail: "",
            defused: false,
        }
    }
}

/// Explains `field` (or every field, in template order, when `None`) from one parse of
/// `decoded`, as the reference parses it (token ids included).
pub fn explain_decoded(
    template: &Template,
    decoded: &Decoded<'_>,
    tools: Option<&Value>,
    field: Option<&str>,
    options: Options,
) -> Result<Vec<Explanation>, String> {
    let indices: Vec<usize> = match field {
        None => (0..template.fields().len()).collect(),
        Some(field) => vec![template.field_index(field).ok_or_else(|| {
            let names: Vec<&str> = template.fields().iter().map(|f| f.name.as_str()).collect();
            format!(
                "no field '{field}' in the template (fields: {})",
                names.join(", ")
            )
        })?],
    };
    within_budget(decoded.fed, || {
        let t = traced(template, decoded, tools)?;
        indices
            .into_iter()
            .map(|i| {
                explain_field(template, &t, i, options).map_err(|e| name_budget(e, template, i))
            })
            .collect()
    })
}

/// Runs an explanation (its parse and its own searches) within one regex work budget that
/// grows with the text, so that a pathological pattern ends it in bounded time.
fn within_budget<T>(generation: &str, f: impl FnOnce() -> T) -> T {
    // What a parse may spend (what the reference does in ten seconds), plus the
    // explanation's own searches.
    const BASE: u64 = pyregex::REFERENCE_TEN_SECONDS;
    const PER_BYTE: u64 = 1_024;
    pyregex::Budget::new(BASE.saturating_add(PER_BYTE.saturating_mul(generation.len() as u64)))
        .run(f)
}

/// What [`regex_error`] says for the work budget, until [`name_budget`] names the field.
const SEARCH_BUDGET: &str = "the search exceeded its work budget";

/// The work-budget error of a search made for `field`, worded as the parse's (naming the
/// field and its pattern), so that it reads and exits like `rtbench parse`.
fn name_budget(e: String, template: &Template, field: usize) -> String {
    if e != SEARCH_BUDGET {
        return e;
    }
    let f = &template.fields()[field];
    let (which, pattern) = match (&f.open, &f.close) {
        (Some(Delimiter::Pattern(p)), _) => ("open", p.source()),
        (_, Some(Delimiter::Pattern(p))) => ("close", p.source()),
        _ => return format!("Field '{}': {SEARCH_BUDGET}", f.name),
    };
    format!(
        "Field '{}': {which}_pattern {} backtracks catastrophically on this text, so the \
         search was stopped (the reference would hang or run out of memory here); avoid nested \
         quantifiers such as (a*)*, alternatives that overlap inside a repeat such as (a|aa)* \
         and many capture groups inside a repeat",
        f.name,
        Value::from(pattern).py_repr()
    )
}

/// The lines of several explanations of one parse: each field's own lines, then the prefix
/// and the parse error once.
pub fn lines_all(explanations: &[Explanation]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, e) in explanations.iter().enumerate() {
        if i > 0 {
            out.push(String::new());
        }
        out.extend(e.field_lines());
    }
    if let Some(e) = explanations.first() {
        out.push(String::new());
        out.extend(
            e.shared_lines()
                .into_iter()
                .map(|l| l.trim_start().to_string()),
        );
    }
    out
}

fn regex_error(e: RegexError) -> String {
    match e {
        RegexError::Budget => SEARCH_BUDGET.to_string(),
        e => format!("searching the delimiters failed: {e}"),
    }
}

fn traced(template: &Template, d: &Decoded<'_>, tools: Option<&Value>) -> Result<Traced, String> {
    let prefix = d.prefix;
    // The one-shot traced parse `rtbench parse` and the workbench see, with the events before
    // an error kept.
    // The regions keep referring to the message for a repeating field's values: only the
    // explained field's regions are given copies (a sample of many small tool calls would
    // otherwise hold every call twice while an unmatched field is explained).
    let Audit {
        result,
        regions,
        origin,
        ..
    } = audit_decoded(template, prefix, d.fed, d.tail, tools, d.defused);
    // The document is made once the parse is done: the parse holds a copy of its own.
    let document = format!("{prefix}{}{}", d.fed, d.tail);
    let (message, parse_error) = match result {
        Ok(m) => (Some(m), None),
        Err(e) => (None, Some(e)),
    };
    // A parse stopped by the work budget cannot be explained further (every search would stop
    // the same way): report it as `rtbench parse` does.
    if let Some(e) = &parse_error
        && rtbench_engine::parser::is_budget_error(&e.message)
    {
        return Err(e.message.clone());
    }
    let anchor = if prefix.is_empty() {
        AnchorCut::EmptyPrefix
    } else {
        match template
            .start_anchor()
            .last_match_end(prefix)
            .map_err(regex_error)?
        {
            None => AnchorCut::NotFound {
                prefix_len: prefix.len(),
            },
            Some(at) => AnchorCut::Cut {
                at,
                kept: at..prefix.len(),
            },
        }
    };
    Ok(Traced {
        tools: tools.cloned(),
        document,
        prefix_len: prefix.len(),
        origin,
        regions,
        message,
        parse_error,
        anchor,
    })
}

/// The close span of a region, empty where it ended (or at its body's end while open).
fn close_of(g: &Region) -> Range<usize> {
    g.close.clone().unwrap_or(g.body.end..g.body.end)
}

/// Explains field `index` from the traced parse `t`.
fn explain_field(
    template: &Template,
    t: &Traced,
    index: usize,
    options: Options,
) -> Result<Explanation, String> {
    let fields = template.fields();
    let f = &fields[index];
    let scan = FieldScan {
        fields,
        index,
        t,
        parsed: &t.document[t.origin..],
    };
    let open = match &f.open {
        Some(open) => scan.open_findings(open, options)?,
        None => OpenFindings::default(),
    };
    let (nearest_close, close_stuck) = scan.close_near_miss()?;
    let stray_closes = scan.stray_closes()?;
    Ok(Explanation {
        field: f.name.clone(),
        field_names: fields.iter().map(|f| f.name.clone()).collect(),
        open: f.open.as_ref().map(Delimiter::describe),
        close: f.close.as_ref().map(Delimiter::describe),
        open_pattern: pattern_source(&f.open),
        close_pattern: pattern_source(&f.close),
        open_alternatives: open_alternatives(&f.open),
        repeats: f.repeats,
        regions: t
            .regions
            .iter()
            .filter(|g| g.field == index)
            .map(|g| t.whole(template, g.into_owned()))
            .collect(),
        pattern_matches: open.pattern_matches,
        missed_opens: open.missed_opens,
        nearest_open: open.nearest_open,
        open_stuck: open.open_stuck,
        nearest_close,
        close_stuck,
        stray_closes,
        anchor: t.anchor.clone(),
        parse_error: t.parse_error.clone(),
        prefix_len: t.prefix_len,
        version_notes: version_notes(template, index, t),
        document: t.document.clone(),
        options,
        places: Places::default(),
    })
}

/// A pattern delimiter's source (`None` for a literal or no delimiter).
fn pattern_source(d: &Option<Delimiter>) -> Option<String> {
    match d {
        Some(Delimiter::Pattern(p)) => Some(p.source().to_string()),
        _ => None,
    }
}

/// The top-level alternatives of an open pattern (source text), when it has several.
fn open_alternatives(open: &Option<Delimiter>) -> Vec<String> {
    match open {
        Some(Delimiter::Pattern(p)) => {
            let alts = p.regex.alternatives();
            if alts.len() > 1 {
                alts.into_iter()
                    .map(|r| p.source()[r].to_string())
                    .collect()
            } else {
                Vec::new()
            }
        }
        _ => Vec::new(),
    }
}

/// What the field's open delimiter did in the parsed text.
#[derive(Default)]
struct OpenFindings {
    pattern_matches: Vec<PatternMatch>,
    missed_opens: Vec<MissedOpen>,
    nearest_open: Option<Range<usize>>,
    open_stuck: Option<StuckElement>,
}

/// One field's view of a traced parse: what its explanation searches and compares against.
struct FieldScan<'a> {
    fields: &'a [Field],
    index: usize,
    t: &'a Traced,
    /// The text the parser saw (the document from the start anchor's cut on).
    parsed: &'a str,
}

impl FieldScan<'_> {
    fn field(&self) -> &Field {
        &self.fields[self.index]
    }

    fn name(&self, field: usize) -> String {
        self.fields[field].name.clone()
    }

    fn is_explicit(&self, g: &Region) -> bool {
        self.fields[g.field].open.is_some()
    }

    /// Every match of the open delimiter, which of them opened the field and why the others
    /// did not, and where the closest match was when there was none.
    fn open_findings(&self, open: &Delimiter, options: Options) -> Result<OpenFindings, String> {
        let (origin, parsed) = (self.t.origin, self.parsed);
        let found = open.find_all(parsed).map_err(regex_error)?;
        let alternatives = alternative_regexes(open);
        let mut out = OpenFindings::default();
        for r in &found {
            let at = origin + r.start..origin + r.end;
            let opened = self
                .t
                .regions
                .iter()
                .any(|g| g.field == self.index && g.open == at);
            if let Delimiter::Pattern(p) = open {
                let m = self.pattern_match(p, r, at.clone(), opened, &alternatives)?;
                out.pattern_matches.push(m);
            }
            if opened {
                continue;
            }
            if let Some(reason) = self.missed_reason(&at) {
                out.missed_opens.push(MissedOpen { at, reason });
            }
        }
        // Occurrences cut away with the prefix: only on request (a long prompt repeats them).
        if options.prefix_details
            && let AnchorCut::Cut { at, .. } = &self.t.anchor
        {
            for r in open
                .find_all(&self.t.document[..*at])
                .map_err(regex_error)?
            {
                out.missed_opens.push(MissedOpen {
                    at: r,
                    reason: Missed::BeforeAnchor,
                });
            }
        }
        if found.is_empty() {
            (out.nearest_open, out.open_stuck) = self.nearest_open(open)?;
        }
        Ok(out)
    }

    /// The pattern's match at `r` (in the parsed text; `at` in the document): its named
    /// groups and the first top-level alternative that alone gives the same match.
    fn pattern_match(
        &self,
        p: &PatternDelimiter,
        r: &Range<usize>,
        at: Range<usize>,
        opened: bool,
        alternatives: &[(Range<usize>, Option<pyregex::Regex>)],
    ) -> Result<PatternMatch, String> {
        let parsed = self.parsed;
        let groups = match p.regex.match_at(parsed, r.start).map_err(regex_error)? {
            Some(m) => p
                .regex
                .names()
                .iter()
                .map(|(n, i)| (n.clone(), m.group(*i).map(|g| parsed[g].to_string())))
                .collect(),
            None => Vec::new(),
        };
        // Which top-level alternative alone gives this match (the first that does).
        let alternative = alternatives.iter().position(|(_, re)| {
            re.as_ref()
                .and_then(|re| re.match_at(parsed, r.start).ok().flatten())
                .is_some_and(|m| m.end() == r.end)
        });
        let alternative =
            alternative.map(|i| (i, p.source()[alternatives[i].0.clone()].to_string()));
        Ok(PatternMatch {
            at,
            groups,
            alternative,
            opened,
        })
    }

    /// Why a match of the open at `at` (document range) did not open the field; `None` when
    /// nothing the parser committed explains it.
    fn missed_reason(&self, at: &Range<usize>) -> Option<Missed> {
        let regions = &self.t.regions;
        // Inside an explicit region (its close included) only that close is watched.
        if let Some(g) = regions.iter().find(|g| {
            self.is_explicit(g)
                && g.body.start <= at.start
                && (at.start < g.body.end || overlaps(&close_of(g), at))
        }) {
            return Some(Missed::InsideRegion(self.name(g.field)));
        }
        let (g, by, is_open) = regions.iter().find_map(|g| {
            if overlaps(&g.open, at) || (g.open == *at && at.is_empty()) {
                let open = g.open.clone();
                Some((g, open, true))
            } else {
                let c = close_of(&g);
                (overlaps(&c, at) || (c == *at && at.is_empty() && g.close.is_some()))
                    .then_some((g, c, false))
            }
        })?;
        let rule = self.rule(&g, &by, is_open, at);
        Some(Missed::Beaten {
            by: self.name(g.field),
            at: by,
            rule,
        })
    }

    /// The tie-breaking rule by which region `g`'s delimiter at `by` (its open when
    /// `is_open`) won over the field's open at `at`.
    fn rule(&self, g: &Region, by: &Range<usize>, is_open: bool, at: &Range<usize>) -> Rule {
        if by.start < at.start {
            Rule::EarliestStart
        } else if by.start > at.start {
            Rule::CommittedFirst
        } else if by.len() > at.len() {
            Rule::Longest
        } else if by.len() < at.len() {
            Rule::CommittedFirst
        } else if !is_open {
            Rule::OpensBeforeCloses
        } else if self.fields[g.field].name < self.field().name {
            Rule::Alphabetical
        } else {
            Rule::CommittedFirst
        }
    }

    /// For an open that matched nowhere: the closest the text came (a near miss long enough
    /// to say something, outside every delimiter) and where a pattern got stuck there.
    fn nearest_open(
        &self,
        open: &Delimiter,
    ) -> Result<(Option<Range<usize>>, Option<StuckElement>), String> {
        let (origin, parsed, regions) = (self.t.origin, self.parsed, &self.t.regions);
        // A one-character near miss (a lone `<`) says nothing; neither does the beginning
        // of the field's own close delimiter.
        let closes = match &self.field().close {
            Some(c) => c.find_all(parsed).map_err(regex_error)?,
            None => Vec::new(),
        };
        let min_chars = near_miss_chars(open);
        // The text of another region's delimiter is taken.
        let in_delimiter = |at: usize| {
            regions
                .iter()
                .any(|g| g.open.contains(&at) || close_of(&g).contains(&at))
        };
        let nearest_open = open
            .nearest_partial(parsed, 4096)
            .map_err(regex_error)?
            .filter(|r| parsed[r.clone()].chars().count() >= min_chars)
            .filter(|r| !closes.iter().any(|c| c.start <= r.start && r.start < c.end))
            .map(|r| origin + r.start..origin + r.end)
            .filter(|r| !in_delimiter(r.start));
        let mut open_stuck = None;
        if let Some(r) = &nearest_open {
            open_stuck = open
                .stuck_at(parsed, r.start - origin)
                .map_err(regex_error)?
                .map(|s| StuckElement {
                    element: s.element,
                    at: origin + s.at,
                });
        }
        Ok((nearest_open, open_stuck))
    }

    /// For a region that ran to the end of the stream (or failed there): the closest the
    /// text came to the close, and where a pattern close got stuck.
    fn close_near_miss(&self) -> Result<(Option<Range<usize>>, Option<StuckElement>), String> {
        let document = &self.t.document;
        let (Some(close), Some(last)) = (
            &self.field().close,
            self.t.regions.iter().rfind(|g| {
                g.field == self.index
                    && (g.ending == Some(Ending::EndOfStream)
                        || (g.ending == Some(Ending::Failed) && g.body.end == document.len()))
            }),
        ) else {
            return Ok((None, None));
        };
        // A close that was cut off is near the end: search the last 4096 characters.
        let body = &document[last.body.clone()];
        let from = body.char_indices().rev().nth(4095).map_or(0, |(i, _)| i);
        let base = last.body.start + from;
        let tail = &body[from..];
        let near = close
            .nearest_partial(tail, 4096)
            .map_err(regex_error)?
            .filter(|r| {
                let t = &tail[r.clone()];
                t.chars().nth(1).is_some() && !t.trim().is_empty()
            });
        let mut close_stuck = None;
        if let Some(r) = &near {
            close_stuck = close
                .stuck_at(tail, r.start)
                .map_err(regex_error)?
                .map(|s| StuckElement {
                    element: s.element,
                    at: base + s.at,
                });
        }
        Ok((near.map(|r| base + r.start..base + r.end), close_stuck))
    }

    /// Places where an explicit field's close matched while none of its regions was open,
    /// outside every other region and delimiter.
    fn stray_closes(&self) -> Result<Vec<Range<usize>>, String> {
        let f = self.field();
        let (Some(_), Some(close)) = (&f.open, &f.close) else {
            return Ok(Vec::new());
        };
        let (origin, regions, index) = (self.t.origin, &self.t.regions, self.index);
        let mut stray_closes = Vec::new();
        for r in close.find_all(self.parsed).map_err(regex_error)? {
            let at = origin + r.start..origin + r.end;
            let own = regions.iter().any(|g| {
                g.field == index
                    && (close_of(&g) == at || (g.body.start <= at.start && at.start <= g.body.end))
            });
            // Text inside another explicit region, or that is another region's delimiter,
            // was never a candidate for this field's close.
            let inside_other = regions.iter().any(|g| {
                g.field != index
                    && ((self.is_explicit(&g) && g.body.start <= at.start && at.start < g.body.end)
                        || overlaps(&g.open, &at)
                        || overlaps(&close_of(&g), &at))
            });
            if !own && !inside_other && !at.is_empty() {
                stray_closes.push(at);
            }
        }
        Ok(stray_closes)
    }
}

/// The open pattern's top-level alternatives, each compiled alone, when it has several.
fn alternative_regexes(open: &Delimiter) -> Vec<(Range<usize>, Option<pyregex::Regex>)> {
    match open {
        Delimiter::Pattern(p) if p.regex.alternatives().len() > 1 => p
            .regex
            .alternatives()
            .into_iter()
            .map(|r| {
                let re = pyregex::Regex::new(&p.source()[r.clone()], DELIMITER_FLAGS).ok();
                (r, re)
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// How many characters of the open a near miss must match to count: for a literal a third of
/// its length (at least two characters), for a pattern two.
fn near_miss_chars(open: &Delimiter) -> usize {
    match open {
        Delimiter::Literal(set) => set
            .literals
            .iter()
            .map(|l| l.chars().count())
            .min()
            .unwrap_or(0)
            .div_ceil(3)
            .max(2),
        Delimiter::Pattern(_) => 2,
    }
}

/// What the reference version in force did to this field's values where versions differ:
/// which parser `value_parser_by` chose for each tag (5.25), and arguments that tool coercion
/// left as strings because their schema allows `string` (5.25's typed rule for `json` and
/// `python-call-list` fields).
fn version_notes(template: &Template, index: usize, t: &Traced) -> Vec<String> {
    let f = &template.fields()[index];
    let reference = template.reference();
    let mut out = Vec::new();
    let regions = t.regions.iter().filter(|g| g.field == index);
    if f.content == rtbench_engine::ContentKind::XmlInline && reference.value_parser_by() {
        let args = f.content_args.as_dict();
        let by = args
            .and_then(|a| a.get("value_parser_by"))
            .and_then(Value::as_dict);
        let pattern = args
            .and_then(|a| a.get("tag_pattern"))
            .and_then(Value::as_str);
        let fallback = args.and_then(|a| a.get("value_parser"));
        if let (Some(by), Some(pattern)) = (by, pattern)
            && let (Some(group), Some(parsers)) = (
                by.get("group").and_then(Value::as_str),
                by.get("parsers").and_then(Value::as_dict),
            )
            && let Ok(re) = pyregex::Regex::new(pattern, pyregex::Flags { dotall: true })
        {
            let index_of = |name: &str| re.names().iter().find(|(n, _)| n == name).map(|&(_, i)| i);
            for (n, g) in regions.clone().enumerate() {
                let body = &t.document[g.body.clone()];
                for m in re.find_iter(body).flatten() {
                    let key = index_of("key")
                        .and_then(|i| m.group(i))
                        .map_or("?", |r| &body[r]);
                    let captured = index_of(group).and_then(|i| m.group(i)).map(|r| &body[r]);
                    let parser = |v: Option<&Value>| match v {
                        None | Some(Value::Null) => "no parser (the text as written)".to_string(),
                        Some(Value::Dict(d)) => format!(
                            "'{}'",
                            d.get("name").and_then(Value::as_str).unwrap_or("text")
                        ),
                        Some(other) => format!("{} (not a parser spec)", other.py_repr()),
                    };
                    let what = captured.map_or("nothing".into(), |c| Value::from(c).py_repr());
                    let chosen = match (captured.and_then(|c| parsers.get(c)), fallback) {
                        (Some(p), _) => {
                            format!("is read with {} from \"parsers\"", parser(Some(p)))
                        }
                        (None, None | Some(Value::Null)) => format!(
                            "is kept as written (\"parsers\" has no entry for {what}, and there is no value_parser)"
                        ),
                        (None, Some(v)) => format!(
                            "is read with value_parser {} (\"parsers\" has no entry for {what})",
                            parser(Some(v))
                        ),
                    };
                    out.push(format!(
                        "  region {}: tag {} ({group} = {what}) {chosen}",
                        n + 1,
                        Value::from(key).py_repr(),
                    ));
                }
            }
            out.push(format!(
                "  with value_parser_by the tool schema does not cast these values ({reference})"
            ));
        }
    }
    if f.content.is_typed_structured()
        && reference.typed_coercion()
        && let Some(tools) = &t.tools
    {
        for (n, g) in regions.enumerate() {
            let value = g.value_in(t.message.as_ref(), &f.name);
            for (name, arg, value) in string_args(value, tools) {
                out.push(format!(
                    "  region {}: argument '{arg}' of '{name}' stays the string {}: its schema allows string, and {reference} leaves such parameters as the model quoted them in {} fields (5.24 casts them)",
                    n + 1,
                    Value::from(value.as_str()).py_repr(),
                    f.content.name()
                ));
            }
        }
    }
    out
}

/// The string arguments of a tool-call value whose schema allows `string` and another type:
/// `(tool, argument, value)`.
fn string_args(value: Option<&Value>, tools: &Value) -> Vec<(String, String, String)> {
    let calls: Vec<&Value> = match value {
        Some(Value::List(items)) => items.iter().collect(),
        Some(v) => vec![v],
        None => Vec::new(),
    };
    let mut out = Vec::new();
    for call in calls {
        let Some(func) = call
            .as_dict()
            .and_then(|d| d.get("function"))
            .and_then(Value::as_dict)
        else {
            continue;
        };
        let (Some(name), Some(args)) = (
            func.get("name").and_then(Value::as_str),
            func.get("arguments").and_then(Value::as_dict),
        ) else {
            continue;
        };
        let props = tools.as_list().unwrap_or(&[]).iter().find_map(|t| {
            let t = t.as_dict()?;
            let f = t.get("function").and_then(Value::as_dict).unwrap_or(t);
            (f.get("name").and_then(Value::as_str) == Some(name))
                .then(|| f.get("parameters")?.as_dict()?.get("properties")?.as_dict())
                .flatten()
        });
        let Some(props) = props else { continue };
        for (arg, v) in args {
            let types: Vec<&str> = match props
                .get(arg)
                .and_then(Value::as_dict)
                .and_then(|p| p.get("type"))
            {
                Some(Value::Str(t)) => vec![t.as_str()],
                Some(Value::List(ts)) => ts.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            if let Value::Str(s) = v
                && types.contains(&"string")
                && types.len() > 1
            {
                out.push((name.to_string(), arg.to_owned(), s.clone()));
            }
        }
    }
    out
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    !a.is_empty() && a.start < b.end && b.start < a.end
}

/// A pattern source on one line: control characters written as escapes.
fn one_line(src: &str) -> String {
    src.chars()
        .map(|c| match c {
            '\n' => "\\n".to_string(),
            '\r' => "\\r".to_string(),
            '\t' => "\\t".to_string(),
            c if c.is_control() => format!("\\x{:02x}", c as u32),
            c => c.to_string(),
        })
        .collect()
}

impl Explanation {
    /// A place for people, as [`crate::place`] names it: `x.sample:23:27 (generation 6:20)`,
    /// or `generation 6:20` / `prefix 1:3` for text in no file.
    pub fn pos(&self, byte: usize) -> String {
        self.places
            .place(&self.document, self.prefix_len, byte)
            .to_string()
    }

    /// The place of a prefix offset (the prefix's end included).
    fn prefix_pos(&self, byte: usize) -> String {
        let byte = byte.min(self.prefix_len);
        let before = &self.document[..self.document.floor_char_boundary(byte)];
        self.places.end_of(Part::Prefix, before).to_string()
    }

    /// The explanation with its places named in the files `places` says the texts live in.
    pub fn with_places(mut self, places: Places) -> Explanation {
        self.places = places;
        self
    }
}

impl Explanation {
    /// Control-token spellings of this field's delimiters that the model wrote with ordinary
    /// tokens (5.25 defused them when parsing ids): where they are, and that they are text.
    fn defused_lines(&self) -> Vec<String> {
        let sources: Vec<&str> = [
            &self.open,
            &self.close,
            &self.open_pattern,
            &self.close_pattern,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
        defused_spellings(&self.document, self.prefix_len)
            .into_iter()
            .filter(|(_, spelling)| sources.iter().any(|s| s.contains(spelling.as_str())))
            .map(|(r, spelling)| {
                format!(
                    "  {} at {} was written with ordinary tokens, not generated as the control \
                     token: parsing ids, it is text, not a delimiter",
                    Value::from(spelling.as_str()).py_repr(),
                    self.pos(r.start)
                )
            })
            .collect()
    }
}

/// The spellings the token-id decoder defused in the generation (from `from` on): each run of
/// characters joined by markers, with its range and its text without them.
pub fn defused_spellings(document: &str, from: usize) -> Vec<(Range<usize>, String)> {
    let mut out = Vec::new();
    let text = &document[from..];
    let mut search = 0;
    while let Some(m) = text[search..].find(MARKER) {
        let at = search + m;
        // The spelling starts with the character before the first marker.
        let start = text[..at].char_indices().next_back().map_or(at, |(i, _)| i);
        let mut end = at;
        while text[end..].starts_with(MARKER) {
            end += MARKER.len_utf8();
            end += text[end..].chars().next().map_or(0, char::len_utf8);
        }
        out.push((
            from + start..from + end,
            text[start..end].replace(MARKER, ""),
        ));
        search = end;
    }
    out
}

impl Explanation {
    fn name(&self, field: usize) -> &str {
        self.field_names.get(field).map_or("?", String::as_str)
    }

    /// The text of `r`, quoted; a control-token spelling the decoder defused is shown as
    /// written, and said to be defused.
    fn quote(&self, r: &Range<usize>) -> String {
        let text = &self.document[r.clone()];
        if !text.contains(MARKER) {
            return Value::from(shorten(text).as_str()).py_repr();
        }
        let shown = Value::from(shorten(&text.replace(MARKER, "")).as_str()).py_repr();
        format!(
            "{shown} (control-token spellings in it were written with ordinary tokens: defused)"
        )
    }

    /// Describes a near miss: the text that matched the beginning of a delimiter and the
    /// character after it that did not fit.
    fn near_miss(&self, r: &Range<usize>) -> String {
        let next = self.document[r.end..].chars().next();
        let stop = match next {
            Some(c) => format!(
                "then {} did not fit",
                Value::from(c.to_string().as_str()).py_repr()
            ),
            None => "then the text ended".to_string(),
        };
        format!(
            "{} at {} ({} matched, {stop}) in {}",
            self.quote(r),
            self.pos(r.start),
            characters(self.document[r.clone()].chars().count()),
            self.context(r)
        )
    }

    /// The pattern source with a caret under the element that could not match, and where.
    fn stuck_lines(&self, source: &str, s: &StuckElement) -> Vec<String> {
        let shown = one_line(source);
        let col = one_line(&source[..s.element.start.min(source.len())])
            .chars()
            .count();
        let width = one_line(&source[s.element.clone()]).chars().count().max(1);
        let found = match self.document[s.at..].chars().next() {
            Some(c) => format!("found {}", Value::from(c.to_string().as_str()).py_repr()),
            None => "the text ended".to_string(),
        };
        vec![
            format!("    {shown}"),
            format!(
                "    {}{} this element could not match at {} ({found})",
                " ".repeat(col),
                "^".repeat(width),
                self.pos(s.at)
            ),
        ]
    }

    /// The text around `r`, with `r` bracketed: `…before[r]after…`.
    fn context(&self, r: &Range<usize>) -> String {
        let before: String = self.document[..r.start]
            .chars()
            .rev()
            .take(12)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let after: String = self.document[r.end..].chars().take(12).collect();
        let inside = shorten(&self.document[r.clone()]);
        Value::from(format!("{before}[{inside}]{after}").as_str()).py_repr()
    }

    fn groups(m: &PatternMatch) -> String {
        let mut parts = Vec::new();
        if let Some((i, src)) = &m.alternative {
            parts.push(format!(
                "alternative {} {}",
                i + 1,
                Value::from(src.as_str()).py_repr()
            ));
        }
        if !m.groups.is_empty() {
            let g: Vec<String> = m
                .groups
                .iter()
                .map(|(n, v)| match v {
                    Some(v) => format!("{n}={}", Value::from(shorten(v).as_str()).py_repr()),
                    None => format!("{n}=None"),
                })
                .collect();
            parts.push(format!("groups: {}", g.join(", ")));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join("; "))
        }
    }

    /// The explanation as plain lines of text: the field's own lines, then the prefix and the
    /// parse error.
    pub fn lines(&self) -> Vec<String> {
        let mut out = self.field_lines();
        out.extend(self.shared_lines());
        out
    }

    /// The lines about the field alone (no prefix or parse error lines).
    pub fn field_lines(&self) -> Vec<String> {
        let mut out = vec![self.delimiters_line()];
        out.extend(self.alternatives_line());
        if self.regions.is_empty() {
            out.push("  it matched nowhere: the message has no value from this field.".into());
        }
        for (i, g) in self.regions.iter().enumerate() {
            out.push(format!(
                "  region {}: {}; {}; body {}",
                i + 1,
                self.region_opened(g),
                self.region_ended(g),
                characters(self.document[g.body.clone()].chars().count())
            ));
        }
        self.missed_lines(&mut out);
        self.nearest_open_lines(&mut out);
        out.extend(self.defused_lines());
        out.extend(self.version_notes.iter().cloned());
        self.nearest_close_lines(&mut out);
        out.extend(self.replaced_line());
        self.stray_close_lines(&mut out);
        out
    }

    /// `field 'name': ...`: the field's delimiters.
    fn delimiters_line(&self) -> String {
        let delims = match (&self.open, &self.close) {
            (Some(o), Some(c)) => format!("open {o}, close {c}"),
            (Some(o), None) => format!("open {o}, no close (runs to the end of the stream)"),
            (None, Some(c)) => format!("implicit (takes leftover text), close {c}"),
            (None, None) => "implicit (takes leftover text), no close".into(),
        };
        format!("field '{}': {delims}", self.field)
    }

    /// The open pattern's alternatives, when it has several (with a hint when an unescaped
    /// `|` is the likely cause).
    fn alternatives_line(&self) -> Option<String> {
        if self.open_alternatives.is_empty() {
            return None;
        }
        let alts: Vec<String> = self
            .open_alternatives
            .iter()
            .map(|a| Value::from(a.as_str()).py_repr())
            .collect();
        let hint = if self.open_alternatives.iter().any(|a| a.is_empty())
            || self
                .open_pattern
                .as_deref()
                .is_some_and(|p| p.contains("<|") || p.contains("|>"))
        {
            " (an unescaped '|' is alternation: write '\\|' to match it literally)"
        } else {
            ""
        };
        Some(format!(
            "  the open pattern has {} alternatives: {}{hint}",
            alts.len(),
            alts.join(" | ")
        ))
    }

    /// How region `g` opened: by which text (and pattern groups), or as leftover text.
    fn region_opened(&self, g: &Region) -> String {
        if g.open.is_empty() && self.open.is_none() {
            return format!("opened at {} (first leftover text)", self.pos(g.open.start));
        }
        let how = self
            .pattern_matches
            .iter()
            .find(|m| m.at == g.open)
            .map(Self::groups)
            .unwrap_or_default();
        format!(
            "opened by {} at {}{how}",
            self.quote(&g.open),
            self.pos(g.open.start)
        )
    }

    /// How region `g` ended: its close, another field's open, the end of the stream, a
    /// failure, or not yet.
    fn region_ended(&self, g: &Region) -> String {
        let close = close_of(g);
        match &g.ending {
            Some(Ending::Close) => format!(
                "closed by {} at {}",
                self.quote(&close),
                self.pos(close.start)
            ),
            Some(Ending::Open(by)) => format!(
                "ended at {} where '{}' opened",
                self.pos(close.start),
                self.name(*by)
            ),
            Some(Ending::EndOfStream) => {
                "ran to the end of the stream (its close never matched)".into()
            }
            Some(Ending::Failed) => format!(
                "its body up to {} could not be parsed (below)",
                self.pos(g.body.end)
            ),
            None => format!(
                "still open at {} when parsing stopped",
                self.pos(g.body.end)
            ),
        }
    }

    /// The closest the text came to the open when it never matched, or that it never
    /// appears.
    fn nearest_open_lines(&self, out: &mut Vec<String>) {
        if let Some(r) = &self.nearest_open {
            let what = if self.open_pattern.is_some() {
                "the open pattern never matched"
            } else {
                "the open delimiter never appears"
            };
            out.push(format!("  {what}; the closest: {}", self.near_miss(r)));
            if let (Some(src), Some(s)) = (&self.open_pattern, &self.open_stuck) {
                out.extend(self.stuck_lines(src, s));
            }
        } else if self.regions.is_empty() && self.open.is_some() && self.missed_opens.is_empty() {
            out.push("  the open delimiter never appears in the text the parser saw".into());
        }
    }

    /// The closest the text came to the close after the last open, when it never matched.
    fn nearest_close_lines(&self, out: &mut Vec<String>) {
        if let Some(r) = &self.nearest_close {
            out.push(format!(
                "  the close delimiter never matched after the last open; the closest: {}",
                self.near_miss(r)
            ));
            if let (Some(src), Some(s)) = (&self.close_pattern, &self.close_stuck) {
                out.extend(self.stuck_lines(src, s));
            }
        }
    }

    /// For a field that does not repeat but had several regions: only the last one's value
    /// is kept.
    fn replaced_line(&self) -> Option<String> {
        let count = self.regions.len();
        if count <= 1 || self.repeats {
            return None;
        }
        Some(format!(
            "  the field does not repeat, so each region replaced the previous value: the message keeps region {count}'s{}",
            if self
                .regions
                .last()
                .is_some_and(|g| self.document[g.body.clone()].trim().is_empty())
            {
                ", which is empty and so dropped from the message (use repeats with join to keep every region)"
            } else {
                ""
            }
        ))
    }

    /// The close delimiter's stray matches, a few of them.
    fn stray_close_lines(&self, out: &mut Vec<String>) {
        let orphan = |r: &Range<usize>| self.regions.iter().all(|g| g.open.start > r.start);
        for r in self.stray_closes.iter().take(LISTED) {
            let hint = if orphan(r) {
                ": its open delimiter did not match before it (a typo in the open, or an open that the prompt wrote and the prefix lacks)"
            } else {
                ""
            };
            out.push(format!(
                "  the close delimiter appears at {} ({}) while no region of this field was open{hint}",
                self.pos(r.start),
                self.context(r)
            ));
        }
        if self.stray_closes.len() > LISTED {
            out.push(format!(
                "  ... and {} more such closes",
                self.stray_closes.len() - LISTED
            ));
        }
    }

    /// Matches of the open that did not open the field, grouped by reason, a few of each.
    fn missed_lines(&self, out: &mut Vec<String>) {
        let what = if self.open_pattern.is_some() {
            "the open pattern matched"
        } else {
            "the open delimiter appears"
        };
        let key = |m: &MissedOpen| match &m.reason {
            Missed::InsideRegion(f) => format!("inside {f}"),
            Missed::Beaten { by, rule, .. } => format!("beaten {by} {rule:?}"),
            Missed::BeforeAnchor => "anchor".into(),
        };
        let mut kinds: Vec<String> = Vec::new();
        for m in &self.missed_opens {
            let k = key(m);
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        for k in kinds {
            let group: Vec<&MissedOpen> =
                self.missed_opens.iter().filter(|m| key(m) == k).collect();
            if let Some(Missed::BeforeAnchor) = group.first().map(|m| &m.reason) {
                let at: Vec<String> = group
                    .iter()
                    .take(LISTED)
                    .map(|m| self.pos(m.at.start))
                    .collect();
                let more = group.len().saturating_sub(LISTED);
                out.push(format!(
                    "  {what} {} in the prefix before the start anchor, which the parser cuts away: at {}{}",
                    times(group.len()),
                    at.join(", "),
                    if more > 0 { format!(" and {more} more") } else { String::new() }
                ));
                continue;
            }
            for m in group.iter().take(LISTED) {
                let why = match &m.reason {
                    Missed::InsideRegion(f) => format!(
                        "it lay inside the '{f}' region, where only that region's close is watched"
                    ),
                    Missed::Beaten { by, at, rule } => format!(
                        "'{by}' matched {} at {} first ({})",
                        self.quote(at),
                        self.pos(at.start),
                        rule.says()
                    ),
                    // Grouped into one line above.
                    Missed::BeforeAnchor => String::new(),
                };
                let how = self
                    .pattern_matches
                    .iter()
                    .find(|p| p.at == m.at)
                    .map(Self::groups)
                    .unwrap_or_default();
                out.push(format!(
                    "  {what} {} at {}{how} but did not open the field: {why}",
                    self.quote(&m.at),
                    self.pos(m.at.start)
                ));
            }
            if group.len() > LISTED {
                out.push(format!(
                    "  ... and {} more such matches",
                    group.len() - LISTED
                ));
            }
        }
    }

    /// The lines about the prefix and the parse error, the same for every field.
    pub fn shared_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        match &self.anchor {
            AnchorCut::EmptyPrefix => out.push(
                "  prefix: none was given, so nothing the prompt wrote is known (a chat template that opens a region, such as <think>, for the model leaves this region unopened); pass the prompt as the prefix".into(),
            ),
            AnchorCut::NotFound { prefix_len } => out.push(format!(
                "  prefix: the start anchor was not found in it, so the whole prefix ({}, earlier turns included) was parsed",
                characters(self.document[..*prefix_len].chars().count())
            )),
            AnchorCut::Cut { at, kept } => out.push(format!(
                "  prefix: cut after the last start anchor at {}; the parser saw {} of it",
                self.prefix_pos(*at),
                if kept.is_empty() { "nothing".to_string() } else { self.quote(kept) }
            )),
        }
        if let Some(e) = &self.parse_error {
            out.push(format!("  parsing failed: {}", e.text()));
        }
        out
    }
}

/// Longest quoted stretch of text, in characters.
const QUOTE_CHARS: usize = 60;

/// `text`, or its beginning and end around an ellipsis when it is longer than [`QUOTE_CHARS`].
fn shorten(text: &str) -> String {
    let n = text.chars().count();
    if n <= QUOTE_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(QUOTE_CHARS / 2).collect();
    let tail: String = text.chars().skip(n - QUOTE_CHARS / 2).collect();
    format!("{head}…{tail}")
}

fn characters(n: usize) -> String {
    if n == 1 {
        "1 character".into()
    } else {
        format!("{n} characters")
    }
}

fn times(n: usize) -> String {
    if n == 1 {
        "once".into()
    } else {
        format!("{n} times")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtbench_engine::py::json_loads;
    use rtbench_engine::template::load_template;

    fn template(json: &str) -> Template {
        load_template(&json_loads(json).unwrap()).unwrap()
    }

    /// A Kimi-K2-like template whose open pattern left `<|tool_call_begin|>` unescaped.
    const KIMI: &str = r#"{
      "start_anchor": "<|im_assistant|>assistant<|im_middle|>",
      "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
          "open_pattern": "<|tool_call_begin|>\\s*(?P<name>functions\\.[\\w.]+:\\d+)\\s*<\\|tool_call_argument_begin\\|>",
          "close": "<|tool_call_end|>",
          "content": "json", "repeats": true,
          "transform": {"id": "{name}", "arguments": "{content}"}
        },
        "content": {"close": "<|im_end|>"}
      }
    }"#;
    const KIMI_PROMPT: &str = "<|im_user|>user<|im_middle|>Weather in Paris?<|im_end|><|im_assistant|>assistant<|im_middle|>";
    const KIMI_CALL: &str = "<think>Check the weather.</think>Let me check.\n<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>";

    /// A Qwen-like template whose tool-call open pattern captures the call's name.
    const QWEN: &str = r#"{
      "start_anchor": "<|im_start|>assistant\n",
      "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "tool_calls": {
          "open_pattern": "<tool_call>\\s*\\{\"name\": \"(?P<name>\\w+)\", ",
          "close": "}\n</tool_call>",
          "content": "json", "repeats": true,
          "transform": {"name": "{name}", "arguments": "{content}"}
        },
        "content": {"close": "<|im_end|>"}
      }
    }"#;
    const QWEN_PROMPT: &str =
        "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n";
    const QWEN_TYPO: &str = "<think>\nNeed the weather.\n</think>\n<tool_call>\n{\"nmae\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>";

    fn has(lines: &[String], line: &str) {
        assert!(
            lines.iter().any(|l| l == line),
            "missing line\n{line}\nin\n{}",
            lines.join("\n")
        );
    }

    #[test]
    fn an_unescaped_bar_shows_where_the_pattern_matched_a_lone_angle_bracket() {
        let t = template(KIMI);
        let e = explain(&t, KIMI_PROMPT, KIMI_CALL, None, "tool_calls").unwrap();
        assert_eq!(e.open_alternatives, ["<", "tool_call_begin", KIMI_ALT3]);
        // The region the parse error is about was opened by the `<` of
        // `<|tool_calls_section_begin|>`, at the start of line 2.
        assert_eq!(e.regions.len(), 1);
        let g = &e.regions[0];
        assert_eq!(&e.document[g.open.clone()], "<");
        assert_eq!(e.pos(g.open.start), "generation 2:1");
        assert_eq!(g.ending, Some(Ending::Failed));
        let opened = e.pattern_matches.iter().find(|m| m.at == g.open).unwrap();
        assert_eq!(
            (opened.opened, opened.alternative.clone()),
            (true, Some((0, "<".into())))
        );
        assert_eq!(opened.groups, [("name".to_string(), None)]);
        let lines = e.lines();
        has(
            &lines,
            &format!(
                "  the open pattern has 3 alternatives: '<' | 'tool_call_begin' | {} (an unescaped '|' is alternation: write '\\|' to match it literally)",
                Value::from(KIMI_ALT3).py_repr()
            ),
        );
        has(
            &lines,
            "  region 1: opened by '<' at generation 2:1 (alternative 1 '<'; groups: name=None); its body up to generation 2:116 could not be parsed (below); body 114 characters",
        );
        has(
            &lines,
            "  the open pattern matched '<' at generation 1:1 (alternative 1 '<'; groups: name=None) but did not open the field: 'thinking' matched '<think>' at generation 1:1 first (same start: the longest match wins)",
        );
        has(
            &lines,
            "  the open pattern matched '>functions.get_weather:0<|tool_call_argument_begin|>' at generation 2:47 (alternative 3 '>\\\\s*(?P<name>functions\\\\.[\\\\w.]+:\\\\d+)\\\\s*<\\\\|tool_call_argument_begin\\\\|>'; groups: name='functions.get_weather:0') but did not open the field: it lay inside the 'tool_calls' region, where only that region's close is watched",
        );
        // Its own close, at the end of the failed body, is not a stray close.
        assert!(e.stray_closes.is_empty(), "{:?}", e.stray_closes);
        assert!(!lines.iter().any(|l| l.contains("matched nowhere")));
    }

    const KIMI_ALT3: &str = r">\s*(?P<name>functions\.[\w.]+:\d+)\s*<\|tool_call_argument_begin\|>";

    #[test]
    fn a_typo_in_the_sample_puts_the_caret_under_the_pattern_element_that_failed() {
        let t = template(QWEN);
        let e = explain(&t, QWEN_PROMPT, QWEN_TYPO, None, "tool_calls").unwrap();
        assert!(e.regions.is_empty() && e.pattern_matches.is_empty());
        let near = e.nearest_open.clone().unwrap();
        assert_eq!(&e.document[near.clone()], "<tool_call>\n{\"n");
        assert_eq!(e.pos(near.start), "generation 4:1");
        let stuck = e.open_stuck.clone().unwrap();
        let source = e.open_pattern.clone().unwrap();
        // `n` matched, then the pattern's `a` (of `name`) met the sample's `m` (of `nmae`).
        assert_eq!(&source[stuck.element.clone()], "a");
        assert_eq!(stuck.element.start, r#"<tool_call>\s*\{"n"#.len());
        assert_eq!(e.pos(stuck.at), "generation 5:4");
        let lines = e.lines();
        has(
            &lines,
            "  the open pattern never matched; the closest: '<tool_call>\\n{\"n' at generation 4:1 (15 characters matched, then 'm' did not fit) in 'r.\\n</think>\\n[<tool_call>\\n{\"n]mae\": \"get_w'",
        );
        has(&lines, r#"    <tool_call>\s*\{"name": "(?P<name>\w+)", "#);
        has(
            &lines,
            "                      ^ this element could not match at generation 5:4 (found 'm')",
        );
    }

    #[test]
    fn a_pattern_match_lost_to_an_earlier_open_says_which_rule() {
        let t = template(
            r#"{"start_anchor": "A:", "fields": {
            "note": {"open": "[x", "close": "]"},
            "call": {"open_pattern": "x(?P<n>\\d+)", "close": ";", "transform": "{n}"},
            "content": {}}}"#,
        );
        let e = explain(&t, "A:", "hi [x12] then x7;", None, "call").unwrap();
        assert_eq!(
            e.missed_opens,
            [MissedOpen {
                at: 6..9,
                reason: Missed::Beaten {
                    by: "note".into(),
                    at: 5..7,
                    rule: Rule::EarliestStart
                }
            }]
        );
        assert_eq!(
            e.lines(),
            [
                "field 'call': open pattern 'x(?P<n>\\\\d+)', close ';'",
                "  region 1: opened by 'x7' at generation 1:15 (groups: n='7'); closed by ';' at generation 1:17; body 0 characters",
                "  the open pattern matched 'x12' at generation 1:5 (groups: n='12') but did not open the field: 'note' matched '[x' at generation 1:4 first (the earliest start wins)",
                "  prefix: cut after the last start anchor at prefix 1:3; the parser saw nothing of it",
            ]
        );
    }

    #[test]
    fn the_prefix_before_the_anchor_is_quiet_unless_asked() {
        let t = template(KIMI);
        let noisy = format!("{}{KIMI_PROMPT}", "<b>bold</b> and <i>it</i>\n".repeat(10));
        let quiet = explain(&t, &noisy, KIMI_CALL, None, "tool_calls").unwrap();
        assert!(
            !quiet
                .missed_opens
                .iter()
                .any(|m| m.reason == Missed::BeforeAnchor)
        );
        assert!(!quiet.lines().iter().any(|l| l.contains("prefix 1:1")));
        // The generation's positions do not move with the prefix.
        assert_eq!(quiet.pos(quiet.regions[0].open.start), "generation 2:1");
        let options = Options {
            prefix_details: true,
        };
        let e = explain_with(&t, &noisy, KIMI_CALL, None, "tool_calls", options).unwrap();
        let lines = e.lines();
        let before: Vec<&str> = lines
            .iter()
            .map(String::as_str)
            .filter(|l| l.contains("before the start anchor"))
            .collect();
        assert_eq!(
            before,
            [
                "  the open pattern matched 45 times in the prefix before the start anchor, which the parser cuts away: at prefix 1:1, prefix 1:8, prefix 1:17 and 42 more"
            ]
        );
    }

    #[test]
    fn every_field_at_once_shares_the_prefix_and_error_lines() {
        let t = template(QWEN);
        let all = explain_all(&t, QWEN_PROMPT, QWEN_TYPO, None, Options::default()).unwrap();
        let names: Vec<&str> = all.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(names, ["thinking", "tool_calls", "content"]);
        let lines = lines_all(&all);
        let prefix_lines = lines.iter().filter(|l| l.starts_with("prefix:")).count();
        assert_eq!(prefix_lines, 1, "{}", lines.join("\n"));
        assert_eq!(
            lines[0],
            "field 'thinking': open '<think>', close '</think>'"
        );
        // The single-field lines are the same as `explain`'s.
        assert_eq!(
            all[1].lines(),
            explain(&t, QWEN_PROMPT, QWEN_TYPO, None, "tool_calls")
                .unwrap()
                .lines()
        );
    }
}
