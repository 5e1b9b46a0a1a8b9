//! How deep a chat template nests, measured on its tokens before the Jinja engine parses it.
//!
//! minijinja parses `{{ 1 + 1 + … }}`, `x|f|f|…`, `a.b.c…` and `elif` chains in loops but
//! builds a syntax tree as deep as the chain, which its compiler then walks (and drops)
//! recursively; `not not …` and `- - …` recurse in the parser itself. A chain of tens of
//! thousands of terms overflows the stack. The reference (jinja2 under Python's recursion
//! limit) fails on such chains too, from a few hundred terms on, with a `RecursionError`.
//!
//! [`deepest`] bounds the depth of the tree from above without parsing: within one tag, every
//! operator token (`+`, `.`, `|`, `not`, `is`, a call's or subscript's brackets, ...) can add one
//! level, and a bracket adds the depth of what it holds; items separated by commas are side by
//! side, not nested. Open blocks (`for`, `if`, each `elif`, `macro`, ...) add one level each to
//! the tags inside them. The bound is never below the true depth, and is close to it for the
//! chains that matter (a chain of n operators measures n).

use minijinja::machinery::{Token, WhitespaceConfig, tokenize};

/// Where a template nests deepest, and how deep (the bound, in levels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Deepest {
    /// The bound on the depth of the syntax tree.
    pub depth: usize,
    /// Byte offset in the source of the tag where it is reached.
    pub offset: usize,
}

/// One open bracket in a tag: the deepest item seen in it so far, and the current item's
/// operators and deepest inner bracket.
#[derive(Default)]
struct Group {
    deepest_item: usize,
    ops: usize,
    inner: usize,
}

impl Group {
    fn end_item(&mut self) {
        self.deepest_item = self.deepest_item.max(self.ops + self.inner);
        self.ops = 0;
        self.inner = 0;
    }

    /// The depth of the bracket's contents once it closes.
    fn close(mut self) -> usize {
        self.end_item();
        self.deepest_item + 1
    }
}

/// An open block: its tag name, and how many levels it adds (one, plus one per `elif`).
struct Block<'a> {
    name: &'a str,
    levels: usize,
}

/// The tags that open a block closed by `end<name>` (`set` only without `=`).
const BLOCK_TAGS: [&str; 9] = [
    "for",
    "if",
    "macro",
    "call",
    "filter",
    "with",
    "block",
    "autoescape",
    "set",
];

/// The deepest nesting of `source` (see the module documentation). Where the source stops
/// lexing, the tokens before count (the parser reads them before it reports the error).
pub(crate) fn deepest(source: &str, whitespace: WhitespaceConfig) -> Deepest {
    let mut best = Deepest {
        depth: 0,
        offset: 0,
    };
    let mut blocks: Vec<Block<'_>> = Vec::new();
    let mut block_levels = 0usize;
    // Within a tag: the brackets (the tag itself is the outermost), the tag's first word and
    // whether an `=` stands at its top level.
    let mut groups: Vec<Group> = Vec::new();
    let mut tag_start = 0usize;
    let mut tag_name: Option<&str> = None;
    let mut first_word = false;
    let mut assigns = false;
    let mut in_block_tag = false;
    for token in tokenize(source, false, Default::default(), whitespace) {
        let Ok((token, span)) = token else {
            break;
        };
        match token {
            Token::VariableStart | Token::BlockStart => {
                groups.clear();
                groups.push(Group::default());
                tag_start = span.start_offset as usize;
                tag_name = None;
                first_word = matches!(token, Token::BlockStart);
                in_block_tag = first_word;
                assigns = false;
                continue;
            }
            Token::VariableEnd | Token::BlockEnd => {
                let mut depth = 0;
                while let Some(group) = groups.pop() {
                    depth = group.close();
                    if let Some(outer) = groups.last_mut() {
                        outer.inner = outer.inner.max(depth);
                    }
                }
                let depth = depth + block_levels;
                if depth > best.depth {
                    best = Deepest {
                        depth,
                        offset: tag_start,
                    };
                }
                if in_block_tag {
                    end_block_tag(tag_name, assigns, &mut blocks, &mut block_levels);
                }
                in_block_tag = false;
                continue;
            }
            _ => {}
        }
        if first_word {
            first_word = false;
            if let Token::Ident(name) = token {
                tag_name = Some(name);
                continue;
            }
        }
        let Some(group) = groups.last_mut() else {
            continue;
        };
        match token {
            Token::TemplateData(_) => {}
            Token::ParenOpen | Token::BracketOpen | Token::BraceOpen => {
                // The bracket is a level of its own (a call, a subscript, a literal).
                group.ops += 1;
                groups.push(Group::default());
            }
            Token::ParenClose | Token::BracketClose | Token::BraceClose => {
                if groups.len() > 1
                    && let Some(inner) = groups.pop()
                {
                    let depth = inner.close();
                    if let Some(outer) = groups.last_mut() {
                        outer.inner = outer.inner.max(depth);
                    }
                }
            }
            Token::Comma => group.end_item(),
            Token::Ident(word) => {
                if matches!(word, "not" | "and" | "or" | "in" | "is" | "if" | "else") {
                    group.ops += 1;
                }
            }
            Token::Str(_)
            | Token::String(_)
            | Token::Int(_)
            | Token::Int128(_)
            | Token::Float(_) => {}
            Token::Assign => {
                group.ops += 1;
                assigns |= groups.len() == 1;
            }
            _ => group.ops += 1,
        }
    }
    best
}

/// Opens or closes a block at the end of a `{% name ... %}` tag.
fn end_block_tag<'a>(
    name: Option<&'a str>,
    assigns: bool,
    blocks: &mut Vec<Block<'a>>,
    levels: &mut usize,
) {
    let Some(name) = name else { return };
    if name == "elif" {
        if let Some(open) = blocks.last_mut() {
            open.levels += 1;
            *levels += 1;
        }
    } else if let Some(closed) = name.strip_prefix("end") {
        if let Some(at) = blocks.iter().rposition(|b| b.name == closed) {
            for block in blocks.drain(at..) {
                *levels -= block.levels;
            }
        }
    } else if BLOCK_TAGS.contains(&name) && !(name == "set" && assigns) {
        blocks.push(Block { name, levels: 1 });
        *levels += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(source: &str) -> usize {
        let ws = WhitespaceConfig {
            keep_trailing_newline: false,
            lstrip_blocks: true,
            trim_blocks: true,
        };
        deepest(source, ws).depth
    }

    #[test]
    fn chains_measure_their_length() {
        let plus = |n: usize| format!("{{{{ {} }}}}", vec!["1"; n].join(" + "));
        assert_eq!(depth(&plus(100)) - depth(&plus(50)), 50);
        let filters = |n: usize| format!("{{{{ 'a'{} }}}}", "|lower".repeat(n));
        assert_eq!(depth(&filters(80)) - depth(&filters(40)), 40);
        let nots = |n: usize| format!("{{{{ {}1 }}}}", "not ".repeat(n));
        assert_eq!(depth(&nots(30)) - depth(&nots(10)), 20);
        let attrs = |n: usize| format!("{{{{ m{} }}}}", ".a".repeat(n));
        assert_eq!(depth(&attrs(30)) - depth(&attrs(10)), 20);
    }

    #[test]
    fn side_by_side_items_do_not_add_up() {
        let list = format!("{{{{ [{}] }}}}", vec!["a.b + 1"; 500].join(", "));
        assert!(depth(&list) < 10, "{}", depth(&list));
        let calls = "{{ f(a.b, c.d) ~ g(e.f) }}";
        assert!(depth(calls) < 10);
    }

    #[test]
    fn blocks_and_elifs_nest() {
        let ifs = |n: usize| format!("{}x{}", "{% if a %}".repeat(n), "{% endif %}".repeat(n));
        assert_eq!(depth(&ifs(20)) - depth(&ifs(10)), 10);
        let elifs = |n: usize| format!("{{% if a %}}{}{{% endif %}}", "{% elif b %}".repeat(n));
        assert_eq!(depth(&elifs(20)) - depth(&elifs(10)), 10);
        // Closed blocks no longer count; `set` with `=` opens none.
        let flat = "{% for a in b %}{% endfor %}{% set x = 1 %}".repeat(50) + "{{ x }}";
        assert!(depth(&flat) < 5);
    }
}
