//! Response templates: the validated, compiled form of a template's JSON.
//!
//! [`load::load_template`] applies every validation rule of the reference, in the reference's
//! order, and reports the first violation with its JSON path; [`source`] reads template files
//! (a bare template or a `tokenizer_config.json`) and turns paths into `file:line:col`.

pub mod error;
pub mod load;
pub mod source;

use std::sync::Arc;

use crate::content::ContentKind;
use crate::delimiter::{ByteSet, Delimiter};
use crate::reference::Reference;
use crate::transform::Transform;
use crate::value::{Dict, Value};

pub use error::{JsonPath, PathSeg, Target, TemplateError};
pub use load::load_template;
pub use source::{LoadError, TemplateSource};

/// A loaded, validated response template, and the reference version it runs under.
///
/// Cloning is cheap (the compiled template is shared), so one template can serve many parsers
/// and threads.
#[derive(Clone, Debug)]
pub struct Template {
    inner: Arc<Compiled>,
    /// Whose semantics parsers of this template follow (loading is the same in every version).
    reference: Reference,
}

/// The compiled parts of a template.
#[derive(Debug)]
struct Compiled {
    defaults: Dict,
    fields: Vec<Field>,
    implicit: Option<usize>,
    start_anchor: Delimiter,
    /// For each explicit field, then outside them: the bytes the delimiters watched there may
    /// begin with (`None` where one is a pattern), see [`Template::watched_start_bytes`].
    start_bytes: Vec<Option<ByteSet>>,
}

/// The delimiters a parser watches with `current` the field being parsed, as (is a close,
/// field, delimiter): that region's close, or outside an explicit region every field's open
/// and the implicit field's close.
fn watched_in(
    fields: &[Field],
    implicit: Option<usize>,
    current: Option<usize>,
) -> impl Iterator<Item = (bool, usize, &Delimiter)> {
    let explicit = current.filter(|&c| Some(c) != implicit);
    let close_of_current = explicit.and_then(|c| Some((true, c, fields[c].close.as_ref()?)));
    let opens = fields
        .iter()
        .enumerate()
        .filter(move |_| explicit.is_none())
        .filter_map(|(i, f)| Some((false, i, f.open.as_ref()?)));
    let implicit_close = implicit
        .filter(|_| explicit.is_none())
        .and_then(|i| Some((true, i, fields[i].close.as_ref()?)));
    close_of_current
        .into_iter()
        .chain(opens)
        .chain(implicit_close)
}

/// One field of a template: how its region is delimited and how its text is parsed. Read it
/// through [`Template::fields`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Field {
    /// The field's key in the template and in the message.
    pub name: String,
    /// `open` / `open_pattern`; `None` for the implicit field.
    pub open: Option<Delimiter>,
    /// `close` / `close_pattern`; `None`: the region runs to the next open or the end.
    pub close: Option<Delimiter>,
    /// The content parser (`content`, default `text`).
    pub content: ContentKind,
    /// `content_args` as written (any JSON value: the reference only complains when a region
    /// is parsed).
    pub content_args: Value,
    /// Python truthiness of `repeats`.
    pub repeats: bool,
    /// `join`: the separator that concatenates a repeating field's string values.
    pub join: Option<String>,
    /// Python truthiness of `optional` (default true).
    pub optional: bool,
    /// `transform`: how the parsed value is reshaped.
    pub transform: Option<Transform>,
    /// `transform_each`: the transform applies to each element of a parsed list.
    pub transform_each: bool,
    /// Where the transform's one placeholder of the whole content lands in its output (see
    /// [`Transform::whole_content_slot`]), found once when the template loads.
    pub(crate) content_slot: Option<Vec<usize>>,
}

impl Field {
    /// Whether this region's chunks are flagged `dirty` (structured content parsers).
    pub fn dirty(&self) -> bool {
        !self.content.is_streamable()
    }

    /// What the field's content parser (`content` with its `content_args`, under `reference`)
    /// makes of a region's body: the value its transform sees as `content`, before the
    /// transform and tool coercion. `None` when the body does not parse. For tools that say
    /// why a transform failed on a region (the parse error carries the body, not the value).
    pub fn parsed_content(&self, body: &str, reference: Reference) -> Option<Value> {
        let mut cache = crate::content::PatternCache::default();
        cache.reference = reference;
        crate::content::parse_content(Some(body), self.content, &self.content_args, &mut cache).ok()
    }
}

impl Template {
    /// Loads a template from its decoded JSON value, applying every rule of the reference.
    /// Errors carry the JSON path of the offending key; [`Template::from_json_str`] and
    /// [`Template::load`] turn it into a line and column.
    pub fn from_value(spec: &Value) -> Result<Template, TemplateError> {
        load_template(spec)
    }

    /// Loads a template from JSON text: a response template, or a `tokenizer_config.json`
    /// holding one under `response_template`. Errors name the line and column.
    ///
    /// ```
    /// use rtbench_engine::Template;
    ///
    /// let err = Template::from_json_str(r#"{
    ///   "start_anchor": "<|assistant|>",
    ///   "fields": {"content": {"repeats": true, "join": 1}}
    /// }"#).unwrap_err();
    /// let diagnostic = err.diagnostic().unwrap();
    /// assert_eq!(diagnostic.position().as_deref(), Some("<string>:3:51"));
    /// assert!(diagnostic.message.contains("join"));
    /// ```
    pub fn from_json_str(text: &str) -> Result<Template, LoadError> {
        let source = source::source_from_text("<string>".into(), text.to_string())?;
        source.template()
    }

    /// Reads and loads a template file (see [`Template::from_json_str`]).
    ///
    /// ```
    /// use rtbench_engine::Template;
    ///
    /// let dir = std::env::temp_dir().join(format!("rtbench-doc-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("tokenizer_config.json");
    /// std::fs::write(&path, r#"{"response_template": {"start_anchor": "A:", "fields": {}}}"#)?;
    /// let err = Template::load(&path).unwrap_err();
    /// let diagnostic = err.diagnostic().unwrap();
    /// assert!(diagnostic.message.contains("fields must be a non-empty dict"));
    /// assert_eq!(diagnostic.location.as_ref().map(|l| (l.line, l.column)), Some((1, 56)));
    ///
    /// std::fs::write(&path, r#"{"response_template": {"start_anchor": "A:", "fields": {"content": {}}}}"#)?;
    /// let template = Template::load(&path)?;
    /// assert_eq!(template.fields()[0].name, "content");
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load(path: impl AsRef<std::path::Path>) -> Result<Template, LoadError> {
        source::load_file(path.as_ref()).map(|(t, _)| t)
    }

    pub(crate) fn new(
        defaults: Dict,
        fields: Vec<Field>,
        implicit: Option<usize>,
        start_anchor: Delimiter,
    ) -> Template {
        let start_bytes = (0..=fields.len())
            .map(|state| {
                let current = (state < fields.len()).then_some(state);
                watched_in(&fields, implicit, current).try_fold(
                    ByteSet::default(),
                    |mut set, (_, _, d)| {
                        set.union(d.start_bytes()?);
                        Some(set)
                    },
                )
            })
            .collect();
        Template {
            inner: Arc::new(Compiled {
                defaults,
                fields,
                implicit,
                start_anchor,
                start_bytes,
            }),
            reference: Reference::NEWEST,
        }
    }

    /// The delimiters a parser watches with `current` the field being parsed (see
    /// [`watched_in`]).
    pub(crate) fn watched(
        &self,
        current: Option<usize>,
    ) -> impl Iterator<Item = (bool, usize, &Delimiter)> {
        watched_in(&self.inner.fields, self.inner.implicit, current)
    }

    /// The bytes the delimiters watched with `current` the field being parsed may begin with:
    /// text appended where nothing is held, none of whose bytes is among them, holds no match
    /// of them nor the start of one. `None` when one is a pattern.
    pub(crate) fn watched_start_bytes(&self, current: Option<usize>) -> Option<&ByteSet> {
        let state = current
            .filter(|&c| Some(c) != self.inner.implicit)
            .unwrap_or(self.inner.fields.len());
        self.inner.start_bytes.get(state)?.as_ref()
    }

    /// The reference version whose semantics parsers of this template follow (the newest
    /// unless [`Template::with_reference`] chose another).
    pub fn reference(&self) -> Reference {
        self.reference
    }

    /// The same template, parsed with `reference`'s semantics (nothing is recompiled).
    ///
    /// ```
    /// use rtbench_engine::{Reference, Template};
    ///
    /// let template = Template::from_json_str(r#"{"start_anchor": "A:", "fields": {"content": {}}}"#)?;
    /// assert_eq!(template.reference(), Reference::NEWEST);
    /// assert_eq!(template.with_reference(Reference::V5_24).reference(), Reference::V5_24);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_reference(mut self, reference: Reference) -> Template {
        self.reference = reference;
        self
    }

    /// Whether parsing text with this template can give different results under the
    /// supported reference versions: whether a parse can reach one of the places where the
    /// engine follows a version (see [`Reference`]). They are, for text:
    ///
    /// - an `xml-inline` field whose `content_args` may name `value_parser_by` (read from
    ///   5.25 on);
    /// - with tools given (`with_tools`), tool-argument coercion: it skips a field whose
    ///   `content_args` may name `value_parser_by` (5.25), and leaves string-typed parameters
    ///   alone for `json` and `python-call-list` fields (5.25).
    ///
    /// `content_args` "may name" the option unless it is a dict without that key (a list or a
    /// string is searched by the reference's `in`, another value makes it raise). Token ids
    /// are the one other difference (5.25 defuses control-token spellings), and they are the
    /// caller's to know. The answer is conservative: `false` means the versions agree on
    /// every text, which the conformance cases recorded under both check.
    pub fn may_differ_between_references(&self, with_tools: bool) -> bool {
        self.fields().iter().any(|f| {
            let names_parser_by = !matches!(
                &f.content_args,
                Value::Dict(d) if !d.contains_key("value_parser_by")
            );
            (f.content == ContentKind::XmlInline && names_parser_by)
                || (with_tools && (names_parser_by || f.content.is_typed_structured()))
        })
    }

    /// Values the message starts with; their keys are never dropped.
    pub fn defaults(&self) -> &Dict {
        &self.inner.defaults
    }

    /// The fields in the template's order (which decides output key order and tie-breaks).
    pub fn fields(&self) -> &[Field] {
        &self.inner.fields
    }

    /// Index of the field without an open delimiter, if any.
    pub fn implicit(&self) -> Option<usize> {
        self.inner.implicit
    }

    /// Marks where the current assistant message begins inside the prefix.
    pub fn start_anchor(&self) -> &Delimiter {
        &self.inner.start_anchor
    }

    /// The index of the field called `name`.
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields().iter().position(|f| f.name == name)
    }
}
