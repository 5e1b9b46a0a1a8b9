//! The patterns of a template and where each is written: the start anchor, every field's open
//! and close patterns, and `tag_pattern` of `xml-inline` content.

use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::py::PathSeg;
use rtbench_engine::template::Template;
use rtbench_engine::value::Value;

/// One pattern of the template.
#[derive(Clone, Debug)]
pub(crate) struct Site {
    pub field: Option<String>,
    pub key: String,
    pub path: Vec<PathSeg>,
    pub pattern: String,
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

/// Every pattern site, in template order.
pub(crate) fn sites(template: &Template) -> Vec<Site> {
    let mut out = Vec::new();
    if let Delimiter::Pattern(p) = template.start_anchor() {
        out.push(Site {
            field: None,
            key: "start_anchor_pattern".into(),
            path: vec![key("start_anchor_pattern")],
            pattern: p.source().to_string(),
        });
    }
    for f in template.fields() {
        for (name, d) in [("open_pattern", &f.open), ("close_pattern", &f.close)] {
            if let Some(Delimiter::Pattern(p)) = d {
                out.push(Site {
                    field: Some(f.name.clone()),
                    key: name.into(),
                    path: vec![key("fields"), key(&f.name), key(name)],
                    pattern: p.source().to_string(),
                });
            }
        }
        if let Value::Dict(args) = &f.content_args
            && let Some(Value::Str(p)) = args.get("tag_pattern")
        {
            out.push(Site {
                field: Some(f.name.clone()),
                key: "content_args.tag_pattern".into(),
                path: vec![
                    key("fields"),
                    key(&f.name),
                    key("content_args"),
                    key("tag_pattern"),
                ],
                pattern: p.to_string(),
            });
        }
    }
    out
}
